import time, numpy as np, pandas as pd, statistics
from core.corpus import load_corpus
from ui.resources import search_context_of
from bench.scale import scatter
c=load_corpus("scale-10000000"); ctx=search_context_of(c,"cpu")
heap=pd.read_parquet(c.data_folder/"corpus.parquet", columns=["text"])["text"]
from core.corpus import _one_chunk
fr=heap.to_frame(); _one_chunk(fr); heap=fr["text"]
mapped=c.frame["text"]
rng=np.random.default_rng(0); inc=np.sort(rng.choice(c.n,20,replace=False)); exc=np.sort(rng.choice(c.n,20,replace=False))
res={"mapped":[], "heap":[]}
for r in range(4):
    for k,col in (("heap",heap),("mapped",mapped)):
        c.frame["text"]=col
        out=scatter(c,ctx,inc,exc); res[k].append((out["scatter_ready_s"], out["lasso_all_s"]))
print(res)
