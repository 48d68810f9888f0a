import numpy as np, pandas as pd
def kl(sub, all_):
    p = sub.value_counts(normalize=True); q = all_.value_counts(normalize=True)
    return float((p * np.log(p / q[p.index])).sum())
def report(name, df, mask):
    days = pd.to_datetime(df.date, utc=True).dt.strftime("%Y-%m-%d")
    rng = np.random.default_rng(0)
    d = days[mask]
    full = kl(d, days)
    for n in (20, 50, 200):
        ks = [kl(d.sample(min(n, len(d)), random_state=s), days) for s in range(5)]
        rs = [kl(days.sample(n, random_state=s), days) for s in range(5)]
        print(f"{name:40s} n={mask.sum():5d} full={full:.2f} n{n}: topic {np.mean(ks):.2f} random {np.mean(rs):.2f}")
c = pd.read_csv("/tmp/s52/czech_gold.csv")
for t in c.label.dropna().unique(): report("cz " + t, c, (c.label == t).values)
k = pd.read_csv("../shared/data/crisislex_t26.csv")
for t in ["Infrastructure and utilities", "Caution and advice", "Donations and volunteering"]:
    report("crisis " + t, k, (k.info_type == t).values)
