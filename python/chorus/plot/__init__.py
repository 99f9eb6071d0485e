"""The figures of `chorus reproduce`, drawn with matplotlib from the CSV/JSON files a study wrote.

    python3 -m chorus.plot themis DIR            # Themis Figs. 8-11 (microbench.csv, activity.csv, study.json)
    python3 -m chorus.plot themis-workloads DIR  # Themis Fig. 12 (workloads.csv)
    python3 -m chorus.plot themis-sensitivity DIR  # Fig. 12 sensitivity (sensitivity_summary.csv)
    python3 -m chorus.plot themis-real DIR       # real ranks vs simulator (real_vs_sim.csv)

Each study module has `load(dir)` (reads and checks the files) and `figures(data)` (returns
(file name, matplotlib Figure) pairs without touching the disk), so tests can look at what is drawn.
"""
