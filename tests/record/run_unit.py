#!/usr/bin/python3
"""run_unit.py Class.test_name - run one test of test_record.py; exit 77
(ctest: skipped, not passed) where torch is not importable here."""
import importlib.util
import os
import sys
import unittest

if importlib.util.find_spec("torch") is None:     # not imported here: that is slow
    print("skipped: torch is not importable by /usr/bin/python3")
    sys.exit(77)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
suite = unittest.defaultTestLoader.loadTestsFromName("test_record." + sys.argv[1])
result = unittest.TextTestRunner(verbosity=2).run(suite)
sys.exit(0 if result.wasSuccessful() else 1)
