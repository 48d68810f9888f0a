"""Figures as free functions: arrays and frames in, ``go.Figure`` out (tests inspect them).

Corpus text is untrusted: every text that reaches a hover label goes through ``html.escape``
(Plotly renders a subset of HTML in hover labels and shows entities as characters).
"""

from __future__ import annotations

import functools
import html
import textwrap
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from core.rows import unique_rows

INCLUDED_COLOUR, EXCLUDED_COLOUR, UNLABELLED_COLOUR = "#2ca02c", "#d62728", "#f2c200"
PER_TEXT_LIMIT = 3000  # above this many texts the timeline shows counts per bin and author
BINS = {"day": "D", "week": "W-MON", "month": "MS"}


def safe_hover(text: str, width: int = 60, max_chars: int = 600) -> str:
    """Escape and wrap a text for a Plotly hover label."""
    return _wrapped(text if len(text) <= max_chars else text[:max_chars] + "…", width)


# The scatter's fixed hover sample (core/hover.py) and its labelled texts are wrapped again at every step of a group:
# 0.38 s of a 300k scatter's 0.48 s figure (bench/RESULTS.md). Kept cut to max_chars: at most ~5 MB.
@functools.lru_cache(maxsize=8192)
def _wrapped(text: str, width: int) -> str:
    lines = textwrap.wrap(text, width) or [""]
    return "<br>".join(html.escape(line) for line in lines)


def auto_bin(dates: pd.Series) -> str:
    span = (dates.max() - dates.min()) if len(dates) else pd.Timedelta(0)
    if span <= pd.Timedelta(days=62):
        return "day"
    if span <= pd.Timedelta(days=730):
        return "week"
    return "month"


def bin_start(dates: pd.Series, bin_name: str) -> pd.Series:
    if bin_name == "day":
        return dates.dt.floor("D")
    if bin_name == "week":
        return (dates.dt.floor("D") - pd.to_timedelta(dates.dt.weekday, unit="D"))
    if bin_name == "month":
        return dates.dt.to_period("M").dt.to_timestamp()
    raise ValueError(f"bin must be day, week or month, got {bin_name!r}")


def bin_codes(dates: pd.Series, bin_name: str) -> tuple[np.ndarray, pd.DatetimeIndex]:
    """(each date's bin number, the bins' starts in order): :func:`bin_start` factorized, in integer
    arithmetic on the datetime64 values where the dates are naive (ten million dates: 0.2 s instead of
    1.5 s through pandas' calendar methods)."""
    values = dates.to_numpy()
    if bin_name not in BINS:
        raise ValueError(f"bin must be day, week or month, got {bin_name!r}")
    if values.dtype.kind != "M" or not len(values):  # time-zone aware (object) or empty: pandas' way
        codes, edges = pd.factorize(bin_start(dates, bin_name), sort=True)
        return codes, pd.DatetimeIndex(edges)
    per_day = int(np.timedelta64(1, "D") // np.timedelta64(1, np.datetime_data(values.dtype)[0]))
    days = values.view(np.int64) // per_day  # days since 1970, floored: before 1970 too
    first, last = int(days.min()), int(days.max())
    small = last - first <= 4 * len(days) + 100_000  # else a few dates centuries apart: no table per day or bin
    # each day of the span binned once and looked up (numpy's month conversion of 10M dates took 0.3 s)
    key = _day_bins(np.arange(first, last + 1), bin_name)[days - first] if small else _day_bins(days, bin_name)
    unit = "datetime64[D]"
    if not small:
        uniq, codes = np.unique(key, return_inverse=True)
        return codes.reshape(-1), pd.DatetimeIndex(uniq.astype(unit).astype(values.dtype))
    lo = int(key.min())
    seen = np.bincount(key - lo) > 0
    lookup = np.cumsum(seen) - 1
    starts = (np.flatnonzero(seen) + lo).astype(unit).astype(values.dtype)
    return lookup[key - lo], pd.DatetimeIndex(starts)


def _day_bins(days: np.ndarray, bin_name: str) -> np.ndarray:
    """The first day (days since 1970) of each day's bin."""
    if bin_name == "week":
        return days - (days + 3) % 7  # 1970-01-01 was a Thursday: back to the Monday
    if bin_name == "month":
        return days.astype("datetime64[D]").astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    return days


BIN_MS = {"day": 86_400_000, "week": 7 * 86_400_000, "month": int(30.44 * 86_400_000)}  # a bin's length


def author_codes(authors: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(each row's author number, the authors' names), the authors ranked by
    texts (most first, ties by name); a missing or empty author is "unknown". Counted on codes, not
    strings: a dictionary-encoded column (as a loaded corpus keeps its authors) gives its codes as they
    are, and only the authors present in these rows are named and ranked (ten million rows: 0.5 s,
    where factorizing the strings took 2.8 s)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    s = authors.reset_index(drop=True)
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes, uniques = s.cat.codes.to_numpy(), s.cat.categories
    else:
        codes, uniques = pd.factorize(s, use_na_sentinel=True)
    n_u = len(uniques)
    codes = np.where(codes < 0, n_u, codes)  # missing: an "unknown" appended last
    counts = np.bincount(codes, minlength=n_u + 1)
    present = np.flatnonzero(counts)
    kept = pd.Index(uniques).take(present[present < n_u])
    named = pd.Series(kept, dtype=object).astype(str)
    named = named.where(~kept.isna() & (named != ""), "unknown")
    named = np.append(named.to_numpy(dtype=object), ["unknown"] * int(len(present) > 0 and present[-1] == n_u))
    if (named == "unknown").sum() > 1:  # "" and missing both "unknown": one author
        merged, names = pd.factorize(named)
    else:
        merged, names = np.arange(len(named)), named
    n = np.bincount(merged, weights=counts[present], minlength=len(names)).astype(np.int64)
    ranked = pc.sort_indices(pa.table({"n": n, "a": pa.array(np.asarray(names, dtype=object), pa.string())}),
                             sort_keys=[("n", "descending"), ("a", "ascending")]).to_numpy()
    rank = np.empty(len(ranked), np.int64)
    rank[ranked] = np.arange(len(ranked))
    table = np.zeros(n_u + 1, np.int64)
    table[present] = rank[merged]
    return table[codes], np.asarray(names, dtype=object)[ranked]


def top_authors(authors: pd.Series, top: int = 20) -> pd.Series:
    codes, names = author_codes(authors)
    return pd.Series(np.where(codes < top, names[np.minimum(codes, len(names) - 1)], "other"), index=authors.index)


@dataclass
class Timeline:
    figure: go.Figure
    mode: str  # "per text" | "counts"
    bin: str
    n: int


# 48 distinct colours (Plotly's Alphabet, Dark24); grey is kept for "other"
AUTHOR_PALETTE = list(dict.fromkeys(qualitative.Alphabet + qualitative.Dark24))
OTHER_COLOUR = "#b0b0b0"


def author_colours(authors: pd.Series) -> dict[str, str]:
    """One colour per author for a whole corpus, the same on every page: the most prolific
    authors get distinct colours in order of their number of texts (ties by name); past the
    palette, colours repeat only among the least prolific."""
    _, ranked = author_codes(authors)
    return {a: AUTHOR_PALETTE[i % len(AUTHOR_PALETTE)] for i, a in enumerate(ranked)}


def timeline(frame: pd.DataFrame, bin_name: str = "auto", top: int = 20,
             per_text_limit: int | None = None, colours: dict[str, str] | None = None) -> Timeline:
    """Counts of texts per date bin, stacked by author (top ``top`` authors, the rest "other").

    Up to ``per_text_limit`` texts each text is its own box whose hover shows date, author and the
    full text; above it, one bar per bin and author with the count. The limit is read when called (default
    ``PER_TEXT_LIMIT``), the one a page reads to leave the texts out of the frame above it.
    """
    per_text_limit = PER_TEXT_LIMIT if per_text_limit is None else per_text_limit
    if "date" not in frame.columns or frame["date"].isna().all():
        raise ValueError("this corpus has no dates: a timeline needs a date column")
    dated = frame["date"].notna()
    mode = "per text" if int(dated.sum()) <= per_text_limit else "counts"
    bin_name = auto_bin(frame.loc[dated, "date"]) if bin_name == "auto" else bin_name
    fig = go.Figure()
    # each bar spans its own bin (from its start), however far apart the bins with texts are: Plotly
    # otherwise sizes bars by the gap between them (a month bar four months wide on sparse data)
    span = {"width": 0.9 * BIN_MS[bin_name], "offset": 0.05 * BIN_MS[bin_name]}
    if mode == "counts":
        tallest, n = _counts_bars(fig, frame, dated, bin_name, top, colours, span)
    else:
        tallest, n = _per_text_boxes(fig, frame, dated, bin_name, top, colours, span)
    fig.update_layout(barmode="stack", bargap=0.05, xaxis_title=f"date ({bin_name})", yaxis_title="texts",
                      legend_title="author", hoverlabel={"align": "left"}, margin={"t": 30})
    fig.update_yaxes(tickformat=",d", rangemode="tozero", **({"dtick": 1} if tallest <= 10 else {}))  # counts: whole
    return Timeline(fig, mode, bin_name, n)


def bin_counts(dates: pd.Series, bin_name: str) -> pd.Series:
    """Texts per bin (index: the bins' starts, in order), undated texts left out."""
    dates = dates.dropna()
    codes, starts = bin_codes(dates, bin_name)
    return pd.Series(np.bincount(codes, minlength=len(starts)), index=starts)


def bin_table(parts: dict[str, pd.Series], whole: pd.Series) -> pd.DataFrame:
    """Per bin of the corpus and part (all: :func:`bin_counts` of the same bin): the part's texts, all texts, and the
    part's share of them in percent (long format: one row per bin and part); for a download beside the timeline. A
    bin of the corpus without any text is left out; a part without a text in a bin has 0 there."""
    whole = whole[whole > 0]
    frames = []
    for label, part in parts.items():
        mine = part.reindex(whole.index, fill_value=0).to_numpy()
        frames.append(pd.DataFrame({"bin_start": whole.index, "texts_of": label, "texts": mine,
                                    "all_texts": whole.to_numpy(),
                                    "share_percent": np.round(100 * mine / whole.to_numpy(), 4)}))
    return pd.concat(frames, ignore_index=True)


def line_timeline(table: pd.DataFrame, bin_name: str, share: bool = True) -> Timeline:
    """One line per part of ``table`` (:func:`bin_table`: several groups compared, or one): its texts per bin, or
    (``share``) their share of all the corpus's texts in each bin, in percent. A share is a topic's weight against
    how much the corpus says, bin by bin."""
    parts = table["texts_of"].unique()
    fig = go.Figure()
    for i, (label, rows) in enumerate(table.groupby("texts_of", sort=False)):
        y = 100 * rows["texts"] / rows["all_texts"] if share else rows["texts"]
        fig.add_trace(go.Scatter(
            x=rows["bin_start"], y=y, mode="lines+markers", marker={"size": 4}, line={"width": 1.5},
            name=html.escape(str(label)), customdata=rows[["texts", "all_texts", "share_percent"]].to_numpy(),
            line_color=AUTHOR_PALETTE[i % len(AUTHOR_PALETTE)] if len(parts) > 1 else None,
            hovertemplate=(html.escape(str(label)) + "<br>" if len(parts) > 1 else "") + "%{x|%Y-%m-%d}<br>"
            "%{customdata[0]:,} of %{customdata[1]:,} texts (%{customdata[2]:.2f}%)<extra></extra>"))
    fig.update_layout(xaxis_title=f"date ({bin_name})", yaxis_title="% of all texts" if share else "texts",
                      margin={"t": 30}, hoverlabel={"align": "left"}, showlegend=len(parts) > 1,
                      legend={"orientation": "h"})
    fig.update_yaxes(rangemode="tozero")
    return Timeline(fig, "share" if share else "lines", bin_name, int(table["texts"].sum()))


def _authors_of(frame: pd.DataFrame, dated: pd.Series) -> pd.Series:
    return frame.loc[dated, "author"] if "author" in frame.columns else pd.Series("all", index=frame.index[dated])


def _per_text_boxes(fig, frame, dated, bin_name, top, colours, span) -> tuple[int, int]:
    """One box per text (hover: date, author, the text), stacked by author; (tallest bin, texts)."""
    f = frame.loc[dated, ["date", "text"]]
    authors = _authors_of(frame, dated).astype(str).replace("", "unknown")
    f = f.assign(who=top_authors(authors, top))
    f["bin"] = bin_start(f["date"], bin_name)
    order = list(f["who"].value_counts().index)
    if "other" in order:
        order.remove("other")
        order.append("other")
    colours = colours if colours is not None else author_colours(authors)
    for who in order:
        colour = OTHER_COLOUR if who == "other" else colours.get(str(who), OTHER_COLOUR)
        part = f[f["who"] == who].sort_values("date")
        hover = [f"{d:%Y-%m-%d %H:%M}<br>{html.escape(str(a))}<br>{safe_hover(t)}"
                 for d, a, t in zip(part["date"], authors[part.index], part["text"])]
        fig.add_bar(x=part["bin"], y=np.ones(len(part), dtype=np.int8), name=html.escape(str(who)),
                    hovertext=hover, hoverinfo="text", marker_line_width=0.5, marker_line_color="white",
                    marker_color=colour, **span)
    return (int(f.groupby("bin").size().max()) if len(f) else 0), len(f)


def _counts_bars(fig, frame, dated, bin_name, top, colours, span) -> tuple[int, int]:
    """One bar per bin and author with its count (top ``top`` authors, the rest "other"), counted on integer
    codes (no string per row); (tallest bin, texts)."""
    codes, names = author_codes(_authors_of(frame, dated))
    who = np.minimum(codes, top)  # the top authors keep their rank; everyone else is "other" (= top)
    bins, edges = bin_codes(frame.loc[dated, "date"], bin_name)
    per = np.bincount(who * len(edges) + bins, minlength=(top + 1) * len(edges)).reshape(top + 1, len(edges))
    totals = per.sum(axis=1)
    order = [w for w in np.argsort(-totals[:top], kind="stable") if totals[w]] + ([top] if totals[top] else [])
    for w in order:
        name = "other" if w == top else str(names[w])
        if w == top:
            colour = OTHER_COLOUR
        elif colours is None:  # this frame's own ranking: what author_colours(these authors) would give
            colour = AUTHOR_PALETTE[w % len(AUTHOR_PALETTE)]
        else:
            colour = colours.get(name, OTHER_COLOUR)
        keep = per[w] > 0
        fig.add_bar(x=edges[keep], y=per[w][keep], name=html.escape(name), marker_color=colour,
                    hovertemplate="%{x|%Y-%m-%d}<br>" + html.escape(name) + ": %{y} texts<extra></extra>", **span)
    return int(per.sum(axis=0).max()) if len(codes) else 0, len(codes)


RASTER_FROM = 400_000  # above this many texts the unlabelled ones are drawn as a density image
GRID = (600, 400)  # the density image's cells (x, y)


@dataclass
class Raster:
    """Where every row lies in the density image, for selections over all rows (not only drawn points)."""

    xy: np.ndarray  # (N, 2) float32
    x_edges: np.ndarray
    y_edges: np.ndarray
    cell: np.ndarray  # (N,) int32: cell of each row, x-major


@dataclass
class Scatter:
    figure: go.Figure
    trace_rows: list[np.ndarray]  # corpus rows of each trace's points, in order (for selections)
    hover_rows: int  # how many points carry their text
    raster: Raster | None = None  # set when the unlabelled texts are an image


def _raster(xy: np.ndarray, grid: tuple[int, int] = GRID) -> Raster:
    """Each row's cell. No sort of the rows by cell: a selection finds its cells' rows in one pass over
    ``cell`` (the stable argsort it replaced took 1.4-1.8 s of the 10M scatter's time to ready)."""
    nx, ny = grid
    px, py = xy[:, 0], xy[:, 1]
    lo = np.array([px.min(), py.min()], dtype=np.float64)
    hi = np.array([px.max(), py.max()], dtype=np.float64)
    span = np.where(hi > lo, hi - lo, 1.0)
    x_edges = np.linspace(lo[0], lo[0] + span[0], nx + 1, dtype=np.float64)
    y_edges = np.linspace(lo[1], lo[1] + span[1], ny + 1, dtype=np.float64)
    gx = np.clip(((px - np.float32(lo[0])) * np.float32(nx / span[0])).astype(np.int32), 0, nx - 1)
    gy = np.clip(((py - np.float32(lo[1])) * np.float32(ny / span[1])).astype(np.int32), 0, ny - 1)
    gx *= ny
    gx += gy
    return Raster(xy, x_edges, y_edges, gx)


def points_in_polygon(px: np.ndarray, py: np.ndarray, vx, vy) -> np.ndarray:
    """Even-odd rule, one numpy pass per polygon edge."""
    vx, vy = np.asarray(vx, np.float64), np.asarray(vy, np.float64)
    inside = np.zeros(len(px), dtype=bool)
    for i in range(len(vx)):
        x1, y1, x2, y2 = vx[i - 1], vy[i - 1], vx[i], vy[i]
        if y1 == y2:
            continue
        crosses = (py >= min(y1, y2)) & (py < max(y1, y2))
        xc = x1 + (py - y1) * (x2 - x1) / (y2 - y1)
        inside ^= crosses & (px < xc)
    return inside


def _clip(x1: float, y1: float, x2: float, y2: float, xmin: float, xmax: float, ymin: float, ymax: float):
    """The part of a segment inside a box (Liang-Barsky), or None."""
    dx, dy = x2 - x1, y2 - y1
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x1 - xmin), (dx, xmax - x1), (-dy, y1 - ymin), (dy, ymax - y1)):
        if p == 0:
            if q < 0:
                return None
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
    if t0 > t1:
        return None
    return x1 + t0 * dx, y1 + t0 * dy, x1 + t1 * dx, y1 + t1 * dy


def rows_in_shape(r: Raster, vx, vy) -> np.ndarray:
    """Rows whose point lies inside the polygon (vx, vy): cells wholly inside take all their rows at
    once; only the rows of cells the outline crosses are tested one by one. Exact, and fast at 10M."""
    vx, vy = np.asarray(vx, np.float64), np.asarray(vy, np.float64)
    if len(vx) < 3:
        return np.zeros(0, np.int64)
    nx, ny = len(r.x_edges) - 1, len(r.y_edges) - 1
    cx, cy = 0.5 * (r.x_edges[:-1] + r.x_edges[1:]), 0.5 * (r.y_edges[:-1] + r.y_edges[1:])
    gx, gy = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    centre_in = points_in_polygon(cx[gx.ravel()], cy[gy.ravel()], vx, vy)
    # cells the outline passes through: walk each edge in steps smaller than a cell
    dx, dy = r.x_edges[1] - r.x_edges[0], r.y_edges[1] - r.y_edges[0]
    border = np.zeros(nx * ny, dtype=bool)
    for i in range(len(vx)):
        edge = _clip(vx[i - 1], vy[i - 1], vx[i], vy[i], r.x_edges[0], r.x_edges[-1], r.y_edges[0], r.y_edges[-1])
        if edge is None:  # wholly outside the image: it crosses no cell
            continue
        x1, y1, x2, y2 = edge
        steps = int(max(abs(x2 - x1) / dx, abs(y2 - y1) / dy) * 2) + 2
        t = np.linspace(0, 1, steps)
        ix = np.clip(((x1 + t * (x2 - x1) - r.x_edges[0]) / dx).astype(np.int64), 0, nx - 1)
        iy = np.clip(((y1 + t * (y2 - y1) - r.y_edges[0]) / dy).astype(np.int64), 0, ny - 1)
        near_x = np.clip(np.stack([ix - 1, ix, ix + 1]), 0, nx - 1)  # and their neighbours: no cell missed
        near_y = np.clip(np.stack([iy - 1, iy, iy + 1]), 0, ny - 1)
        border[(near_x[:, None, :] * ny + near_y[None, :, :]).ravel()] = True
    kind = np.zeros(nx * ny, np.int8)  # 1: the cell lies wholly inside; 2: the outline crosses it
    kind[centre_in & ~border] = 1
    kind[border] = 2
    of_row = kind[r.cell]
    candidates = np.flatnonzero(of_row == 2)
    pts = r.xy[candidates]
    hit = candidates[points_in_polygon(pts[:, 0].astype(np.float64), pts[:, 1].astype(np.float64), vx, vy)]
    return unique_rows(np.flatnonzero(of_row == 1), hit)


def scatter(xy: np.ndarray, labels: np.ndarray, texts=None, hover_sample: int = 5000, seed: int = 0,
            raster_from: int = RASTER_FROM, axes: tuple[str, str] = ("LD1", "LD2"),
            hover: tuple[np.ndarray, list[str]] | None = None) -> Scatter:
    """WebGL scatter of every row: yellow unlabelled, red excluded, green included; ``axes`` names the
    two directions.

    Coordinates go out as float32 arrays (Plotly sends numpy arrays base64-encoded); hover text is
    carried for labelled rows and a sample of ``hover_sample`` unlabelled rows only. Above
    ``raster_from`` rows the unlabelled ones are a density image made here (a browser cannot draw
    ten million points), the sample and the labelled rows points over it; a lasso or box then
    selects over every row (:func:`selected_rows` with the selection's shapes). ``hover`` (rows, their
    texts; core/hover.py) is a fixed sample to use instead of drawing one: its unlabelled rows carry
    those texts, and no text of ``texts`` is read for them.
    """
    xy = np.asarray(xy, dtype=np.float32)
    labels = np.asarray(labels)
    if texts is not None and not hasattr(texts, "take"):
        texts = np.asarray(texts, dtype=object)

    def text_of(rows):
        # take() is positional for a numpy array and a Series alike: only the hovered rows' texts are
        # read (turning a million Arrow strings into a numpy array first took 0.4 s)
        return None if texts is None else texts.take(rows)

    rng = np.random.default_rng(seed)
    unl = np.flatnonzero(labels == 0)
    if hover is not None:
        h_rows = np.asarray(hover[0], dtype=np.int64)
        keep = np.flatnonzero(labels[h_rows] == 0)
        sample, sample_texts = h_rows[keep], [hover[1][i] for i in keep]
    else:
        sample = np.sort(rng.choice(unl, min(hover_sample, len(unl)), replace=False)) if texts is not None \
            else unl[:0]
        sample_texts = text_of(sample)
    scale = min(1.0, float(np.sqrt(len(xy) / 2_000_000)))  # fewer texts, coarser cells: still visible
    raster = _raster(xy, (max(80, int(GRID[0] * scale)), max(50, int(GRID[1] * scale)))) \
        if len(xy) > raster_from else None
    bulk = np.setdiff1d(unl, sample, assume_unique=True) if raster is None else unl[:0]
    fig = go.Figure()
    trace_rows = []

    def add(rows, name, colour, size, hover_texts, legend=True):
        kw = {"hoverinfo": "skip"} if hover_texts is None else \
            {"hovertext": [safe_hover(str(t), max_chars=300) for t in hover_texts], "hoverinfo": "text"}
        fig.add_trace(go.Scattergl(x=xy[rows, 0], y=xy[rows, 1], mode="markers", name=name,
                                   marker={"color": colour, "size": size, "opacity": 0.85 if size > 3 else 0.5},
                                   showlegend=legend, **kw))
        trace_rows.append(rows)

    if raster is not None:
        nx, ny = len(raster.x_edges) - 1, len(raster.y_edges) - 1
        counts = np.bincount(raster.cell, minlength=nx * ny)  # every row, less the labelled ones
        counts -= np.bincount(raster.cell[np.flatnonzero(labels)], minlength=nx * ny)
        counts = counts.reshape(nx, ny).T.astype(np.float32)
        z = np.where(counts > 0, np.log1p(counts), np.nan).astype(np.float32)
        fig.add_trace(go.Heatmap(z=z, x0=float(raster.x_edges[0] + 0.5 * (raster.x_edges[1] - raster.x_edges[0])),
                                 dx=float(raster.x_edges[1] - raster.x_edges[0]),
                                 y0=float(raster.y_edges[0] + 0.5 * (raster.y_edges[1] - raster.y_edges[0])),
                                 dy=float(raster.y_edges[1] - raster.y_edges[0]),
                                 colorscale=[[0, "#f7d04a"], [1, "#7a5c00"]], showscale=False, hoverinfo="skip",
                                 name="unlabelled (density)"))
        trace_rows.append(np.zeros(0, np.int64))  # an image: its selection comes from the shapes
        for axis, edges in (("xaxis", raster.x_edges), ("yaxis", raster.y_edges)):  # a margin, as points get
            pad = 0.04 * (edges[-1] - edges[0])
            fig.update_layout({axis: {"range": [float(edges[0] - pad), float(edges[-1] + pad)]}})
    else:
        add(bulk, "unlabelled", UNLABELLED_COLOUR, 3, None)
    # the legend names the yellow points once: the text-less bulk's entry, or this one where the bulk is
    # empty (a corpus whose unlabelled texts all fit the hover sample) or an image
    add(sample, "unlabelled (with text)", UNLABELLED_COLOUR, 3, sample_texts,
        legend=raster is not None or len(bulk) == 0)
    excluded, included = np.flatnonzero(labels < 0), np.flatnonzero(labels > 0)
    add(excluded, "excluded", EXCLUDED_COLOUR, 6, text_of(excluded))
    add(included, "included", INCLUDED_COLOUR, 6, text_of(included))
    # The template is set here and the page draws with theme=None: Streamlit's theming rewrites the
    # whole figure JSON in the browser, which cost about 1 s of the 300k scatter's draw time.
    fig.update_layout(dragmode="lasso", xaxis_title=axes[0], yaxis_title=axes[1], margin={"t": 30},
                      legend={"orientation": "h"}, hoverlabel={"align": "left"}, template="plotly_white")
    return Scatter(fig, trace_rows, int(len(sample) + (labels != 0).sum()), raster)


NAME_FONT_PX = 11
PLOT_PX = (760, 330)  # a scatter's plotting area on a laptop's page, in pixels: names closer than this overlap


def name_places(fig: go.Figure, places: np.ndarray, names: list[str], extent: tuple[float, float, float, float],
                order=None) -> list[int]:
    """Write each name at its place (x, y) of a scatter whose axes span ``extent`` (x0, x1, y0, y1), in ``order``
    (the most important first), leaving out a name that would cover one already written. Names are escaped (made of
    corpus words, they are untrusted). Returns the indices written."""
    x0, x1, y0, y1 = extent
    per_x, per_y = max(x1 - x0, 1e-12) / PLOT_PX[0], max(y1 - y0, 1e-12) / PLOT_PX[1]  # data units per pixel
    boxes, written = [], []
    for i in (range(len(names)) if order is None else order):
        (x, y), name = np.asarray(places[i], np.float64), names[i]
        if not name:
            continue
        half_w, half_h = (len(name) * 0.6 * NAME_FONT_PX + 8) / 2 * per_x, (NAME_FONT_PX + 8) / 2 * per_y
        if any(abs(x - bx) < half_w + bw and abs(y - by) < half_h + bh for bx, by, bw, bh in boxes):
            continue
        boxes.append((x, y, half_w, half_h))
        written.append(int(i))
        fig.add_annotation(x=x, y=y, text=html.escape(name), showarrow=False, borderpad=2,
                           font={"size": NAME_FONT_PX, "color": "#333"}, bgcolor="rgba(255,255,255,0.75)")
    return written


def selected_rows(result: Scatter, points: list[dict], shapes: dict | None = None) -> np.ndarray:
    """Corpus rows of a Streamlit Plotly selection event: its points, and for a density image every
    row inside its lasso or box (``shapes``: the event's ``{"lasso": [...], "box": [...]}``)."""
    rows = []
    for p in points:
        curve = p.get("curve_number")
        idx = p.get("point_index", p.get("point_number"))
        if curve is None or idx is None or curve >= len(result.trace_rows):
            continue
        tr = result.trace_rows[curve]
        if isinstance(idx, int) and 0 <= idx < len(tr):
            rows.append(int(tr[idx]))
    found = [np.asarray(rows, dtype=np.int64)]
    if result.raster is not None and shapes:
        for lasso in shapes.get("lasso", []) or []:
            found.append(rows_in_shape(result.raster, lasso.get("x", []), lasso.get("y", [])))
        for box in shapes.get("box", []) or []:
            (x0, x1), (y0, y1) = box.get("x", [0, 0])[:2], box.get("y", [0, 0])[:2]
            found.append(rows_in_shape(result.raster, [x0, x1, x1, x0], [y0, y0, y1, y1]))
    return unique_rows(*found)


def size_histogram(sizes: np.ndarray, edges=(1, 2, 5, 10, 30, 100, 300, 1000, 3000, 10**9)) -> go.Figure:
    """Clusters and texts per cluster-size interval (the original study's figure)."""
    sizes = np.asarray(sizes)
    labels, n_clusters, n_texts = [], [], []
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (sizes >= lo) & (sizes < hi)
        labels.append(f"{lo}+" if hi >= 10**9 else str(lo) if hi - 1 == lo else f"{lo}-{hi - 1}")
        n_clusters.append(int(m.sum()))
        n_texts.append(int(sizes[m].sum()))
    fig = go.Figure()
    fig.add_bar(x=labels, y=n_clusters, name="clusters", offsetgroup="clusters")
    fig.add_bar(x=labels, y=n_texts, name="texts", yaxis="y2", offsetgroup="texts")
    fig.update_layout(barmode="group", xaxis_title="cluster size", yaxis_title="clusters",
                      # round ticks of its own (plotly.js syncs an overlaying axis to the left one's grid
                      # by default, at values like 4.77k); no grid of its own, so the lines stay the left's
                      yaxis2={"title": "texts", "overlaying": "y", "side": "right", "tickmode": "auto",
                              "showgrid": False, "rangemode": "tozero"}, margin={"t": 30},
                      legend={"orientation": "h"})
    return fig


def training_curves(curves: pd.DataFrame) -> go.Figure:
    """Loss and validation figures per epoch (a model trained in stages: one x axis across them)."""
    fig = go.Figure()
    for col in ("loss", "validation loss", "validation accuracy"):
        if col in curves and curves[col].notna().any():
            fig.add_scatter(x=curves["step"], y=curves[col], mode="lines+markers", name=col,
                            hovertext=[f"{s} epoch {e}" for s, e in zip(curves["stage"], curves["epoch"])])
    fig.update_layout(xaxis_title="epoch (all stages)", yaxis_title="value", margin={"t": 30},
                      legend={"orientation": "h"}, template="plotly_white")
    return fig


def bag(frame: pd.DataFrame) -> go.Figure:
    """An anchor's bag in 2-D: each text coloured by its predicted membership probability; anchors
    as stars, known non-members as crosses. Hover texts are escaped (untrusted corpus text)."""
    fig = go.Figure()
    rest = frame[~frame["role"].isin(["anchor", "known non-member"])]
    fig.add_trace(go.Scattergl(x=rest["x"], y=rest["y"], mode="markers", name="bag",
                               marker={"color": rest["probability"], "colorscale": "Viridis", "cmin": 0, "cmax": 1,
                                       "size": 6, "colorbar": {"title": "P(member)"}},
                               hovertext=[safe_hover(str(t), max_chars=300) for t in rest["text"]], hoverinfo="text"))
    for role, symbol, colour in (("known non-member", "x", EXCLUDED_COLOUR), ("anchor", "star", "#111111")):
        part = frame[frame["role"] == role]
        if len(part):
            fig.add_trace(go.Scattergl(x=part["x"], y=part["y"], mode="markers", name=role,
                                       marker={"symbol": symbol, "size": 13, "color": colour},
                                       hovertext=[safe_hover(str(t), max_chars=300) for t in part["text"]],
                                       hoverinfo="text"))
    fig.update_layout(xaxis_title="PC1 of the bag", yaxis_title="PC2", margin={"t": 30}, legend={"orientation": "h"},
                      hoverlabel={"align": "left"}, template="plotly_white")
    return fig
