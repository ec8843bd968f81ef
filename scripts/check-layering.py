#!/usr/bin/env python3
"""Layering check: a library module may depend only on modules of a lower layer and on C wrappers.

Reads `swift package describe --type json` (the package as SwiftPM sees it, not a hand-kept list)
and fails when a module depends on one of its own layer or above, or on an executable; the receiver
(beside the Uploader, on layers 1-6) may not reach the Uploader, directly or through another module.
It also fails when the Uploader's sources cast to a backend type (`as?`, `as!`, `is` a `...Backend`): a backend
declares what it offers once, in `features` (AetherTransport's `BackendFeatures`), and the Uploader asks that.

    check-layering.py                      check the package in the current directory
    check-layering.py --describe-json F    check the package described in F (tests feed it fake packages)
    check-layering.py --uploader-sources D check the Swift files under D for backend casts (default:
                                           Sources/Uploader when it exists)
    check-layering.py --phases             print the phase build order: every layered library module the
                                           package has, one per line (the one list CI and `make phases` use)
"""
import json
import os
import re
import subprocess
import sys

# Layer of every library module, in phase-build order: the receiver builds before the Uploader so that
# a clean phase build proves it needs layers 1-6 only.
LAYERS = {
    "AetherIO": 1,
    "AetherIntegrity": 2,
    "AetherCoding": 3,
    "AetherScheduling": 4,
    "AetherSecurity": 5,
    "AetherTransport": 6,
    "AetherReceiver": 7,
    "AetherUploader": 7,
}

# Tooling for the bench and the tests (local nginx and PostgreSQL, the manual clock; the link lab): no layer, and no
# layered module may depend on it (that fails above as "neither a lower layer nor a C wrapper"). Each may depend on C wrappers and on the layered
# modules listed for it, nothing else.
TOOLING = {"AetherTestSupport": {"AetherIO"}, "AetherLinkLab": {"AetherIO"}}

# Modules one may never reach from the other, directly or through any chain of dependencies.
FORBIDDEN_REACH = [("AetherReceiver", "AetherUploader"), ("AetherUploader", "AetherReceiver")]


def load(arguments):
    if "--describe-json" in arguments:
        index = arguments.index("--describe-json")
        if index + 1 >= len(arguments):
            raise SystemExit("layering: --describe-json needs a file")
        with open(arguments[index + 1], encoding="utf-8") as handle:
            raw = handle.read()
    else:
        raw = subprocess.run(
            ["swift", "package", "describe", "--type", "json"], check=True, capture_output=True, text=True
        ).stdout
    return json.loads(raw[raw.index("{"):])


def dependencies(target):
    return (target.get("target_dependencies") or []) + (target.get("product_dependencies") or [])


def reaches(targets, start, goal):
    seen, stack = set(), list(dependencies(targets[start]))
    while stack:
        name = stack.pop()
        if name == goal:
            return True
        if name in seen or name not in targets:
            continue
        seen.add(name)
        stack.extend(dependencies(targets[name]))
    return False


def failures_of(package):
    targets = {t["name"]: t for t in package["targets"]}
    failures = []
    for name, target in targets.items():
        deps = dependencies(target)
        if name in LAYERS:
            layer = LAYERS[name]
            for dep in deps:
                if dep in LAYERS and LAYERS[dep] >= layer:
                    failures.append(f"{name} (layer {layer}) depends on {dep} (layer {LAYERS[dep]})")
                elif dep not in LAYERS and not dep.startswith("CAether"):
                    failures.append(f"{name} depends on {dep}, which is neither a lower layer nor a C wrapper")
        elif name.startswith("CAether"):
            for dep in deps:
                if not dep.startswith("CAether"):
                    failures.append(f"C wrapper {name} depends on Swift module {dep}")
        elif name in TOOLING:
            allowed = TOOLING[name]
            for dep in deps:
                if not dep.startswith("CAether") and dep not in allowed:
                    may = "C wrappers only" if not allowed else "C wrappers and " + ", ".join(sorted(allowed))
                    failures.append(f"tooling module {name} depends on {dep}; it may use {may}")
        elif target.get("type") == "library":
            failures.append(f"library target {name} has no layer; add it to LAYERS in scripts/check-layering.py")
    for start, goal in FORBIDDEN_REACH:
        if start in targets and reaches(targets, start, goal):
            failures.append(f"{start} reaches {goal}; it must build on layers 1-6 only")
    return failures


# A cast or type test to a backend type: `x as? any NativeFeaturesBackend`, `x as! S3Backend`, `x is NativeBackend`.
BACKEND_CAST = re.compile(r"(?<![\w.])(as[?!]|is)\s+(any\s+)?([A-Z]\w*Backend)\b")


def backend_casts(directory):
    """`file:line: text` of every backend cast in the Swift files under `directory` (comments are skipped)."""
    found = []
    for root, _, files in sorted(os.walk(directory)):
        for name in sorted(files):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    code = line.split("//", 1)[0]
                    match = BACKEND_CAST.search(code)
                    if match:
                        found.append(f"{path}:{number}: casts to {match.group(3)} ({match.group(0)})")
    return found


def main(arguments):
    package = load(arguments)
    if "--phases" in arguments:
        present = {t["name"] for t in package["targets"]}
        print("\n".join(name for name in LAYERS if name in present))
        return 0
    failures = failures_of(package)
    if "--uploader-sources" in arguments:
        index = arguments.index("--uploader-sources")
        if index + 1 >= len(arguments):
            raise SystemExit("layering: --uploader-sources needs a directory")
        uploader = arguments[index + 1]
    else:
        uploader = "Sources/Uploader" if os.path.isdir("Sources/Uploader") else None
    if uploader is not None:
        failures += [
            cast + "; ask the backend's `features` instead (a backend declares what it offers once)"
            for cast in backend_casts(uploader)
        ]
    for line in failures:
        print("layering: " + line, file=sys.stderr)
    if not failures:
        checked = sum(1 for t in package["targets"] if t["name"] in LAYERS)
        casts = "" if uploader is None else "; the Uploader casts to no backend type"
        print(f"layering: {checked} modules checked, every dependency points to a lower layer{casts}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
