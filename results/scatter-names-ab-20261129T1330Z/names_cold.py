"""The Scatter map's topic names, first call in a fresh process (cold dictionaries): seconds."""
import os, sys, time
sys.path.insert(0, sys.argv[1]); os.environ["SEMANNO_DATA"] = sys.argv[2]
import logging; logging.disable(logging.WARNING)
from ui import resources, scatter
name = sys.argv[3]
sk, prob, tag = resources.scatter_sketch(name); stamp = str(resources.stamp(name))
scatter._topic_map(name, stamp, tag)
t = time.time(); scatter.topic_names(name, stamp, tag); print(f"{sys.argv[1]} {name} names {time.time() - t:.2f} s")
