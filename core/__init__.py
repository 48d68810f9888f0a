"""Pure logic of Semantic Annotator: no streamlit imports here."""

__version__ = "0.1.0"
