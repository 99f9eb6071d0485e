"""chorus in Python: the figures of `chorus reproduce` (chorus.plot).

Pure Python, no compiled parts; the plots use matplotlib (Debian: python3-matplotlib).
The later Python bindings of the runtime will live in this package too.
"""
