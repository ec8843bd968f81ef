#!/usr/bin/env python3
"""Checks that README.md's Swift examples are the code the test suite compiles and runs.

Every ```swift block of README.md must appear verbatim, as contiguous lines, in
Tests/ReadmeExamplesTests/Examples.swift, except its `import` lines, which must be imports of that file.
Every top-level function of Examples.swift must in turn appear in some README block, so neither side keeps
an example the other lost. `make test` runs this; the build then compiles the examples and
ReadmeExamplesTests runs them.

usage: check-readme-examples.py [--readme FILE] [--examples FILE]
exit 0 when both agree; 1 naming each block or function that does not; 2 for a wrong command line.
"""

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def swift_blocks(text):
    """(line number, lines) of every ```swift block."""
    blocks, current, start = [], None, 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if current is None:
            if stripped == "```swift":
                current, start = [], number
        elif stripped == "```":
            blocks.append((start, current))
            current = None
        else:
            current.append(line)
    if current is not None:
        raise ValueError(f"the ```swift block at line {start} is not closed")
    return blocks


def contains_run(haystack, needle):
    """Whether `needle` occurs in `haystack` as contiguous lines."""
    if not needle:
        return True
    for offset in range(len(haystack) - len(needle) + 1):
        if haystack[offset : offset + len(needle)] == needle:
            return True
    return False


def check(readme_text, examples_text):
    """The list of problems (empty when README and Examples.swift agree)."""
    problems = []
    examples = examples_text.splitlines()
    imports = {line.strip() for line in examples if line.startswith("import ")}
    blocks = swift_blocks(readme_text)
    if not blocks:
        problems.append("README.md has no ```swift block")
    covered = []
    for start, lines in blocks:
        code = [line for line in lines if not line.startswith("import ")]
        for line in lines:
            if line.startswith("import ") and line.strip() not in imports:
                problems.append(f"README.md:{start}: `{line.strip()}` is not an import of Examples.swift")
        while code and not code[0].strip():
            code.pop(0)
        while code and not code[-1].strip():
            code.pop()
        if not code:
            problems.append(f"README.md:{start}: the ```swift block holds no code")
        elif not contains_run(examples, code):
            first = next((line for line in code if not contains_run(examples, [line])), None)
            hint = f" (first line not found: `{first.strip()}`)" if first else " (its lines are there, not in order)"
            problems.append(f"README.md:{start}: the ```swift block is not verbatim in Examples.swift{hint}")
        covered.extend(code)
    for line in examples:
        match = re.match(r"(?:public |internal )?func (\w+)", line)
        if match and line not in covered:
            problems.append(f"Examples.swift: func {match.group(1)} is in no README ```swift block")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--readme", default=str(ROOT / "README.md"))
    parser.add_argument("--examples", default=str(ROOT / "Tests/ReadmeExamplesTests/Examples.swift"))
    arguments = parser.parse_args()
    try:
        readme = Path(arguments.readme).read_text(encoding="utf-8")
        examples = Path(arguments.examples).read_text(encoding="utf-8")
        problems = check(readme, examples)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        print(f"check-readme-examples: {error}", file=sys.stderr)
        return 1
    for problem in problems:
        print(f"check-readme-examples: {problem}", file=sys.stderr)
    if problems:
        print("check-readme-examples: edit README.md and Examples.swift together", file=sys.stderr)
        return 1
    print(f"readme examples: {len(swift_blocks(readme))} swift blocks verbatim in Examples.swift")
    return 0


if __name__ == "__main__":
    sys.exit(main())
