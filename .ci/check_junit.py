"""Fails CI when the test run skipped anything or ran nothing.

`tests/conftest.py` turns a skip inside a test into a failure under
ALPHAGO_JAX_STRICT=1, but a skip at collection time (a module-level
`pytest.importorskip`) never reaches that hook. The junit report records
both, so this reads it: any skipped test case, or a run of no tests, fails.

    python .ci/check_junit.py REPORT.xml
"""

import sys
import xml.etree.ElementTree as ET


def main(path: str) -> int:
  root = ET.parse(path).getroot()
  cases = root.iter("testcase")
  ran, skipped = 0, []
  for case in cases:
    ran += 1
    for skip in case.findall("skipped"):
      name = f"{case.get('classname')}::{case.get('name')}"
      detail = " ".join(filter(None, [skip.get("message"),
                                      (skip.text or "").strip()]))
      skipped.append(f"{name}: {detail}")
  if ran == 0:
    print(f"check_junit: {path} records no test case", file=sys.stderr)
    return 1
  if skipped:
    print(f"check_junit: {len(skipped)} skipped (CI runs every test):",
          file=sys.stderr)
    for line in skipped:
      print(f"  {line}", file=sys.stderr)
    return 1
  print(f"check_junit: {ran} test cases, none skipped")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1]))
