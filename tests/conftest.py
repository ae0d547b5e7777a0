import os
import sys

# The pure-Python UCT in benchmarks/ doubles as an independent reference.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
