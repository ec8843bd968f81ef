#!/usr/bin/env python3
"""Layering check: a library module may depend only on modules of a lower layer and on C wrappers.

Reads `swift package describe --type json` (the package as SwiftPM sees it, not a hand-kept list)
and fails when a module depends on one of its own layer or above, or on an executable.
"""
import json
import subprocess
import sys

LAYERS = {
    "AetherIO": 1,
    "AetherIntegrity": 2,
    "AetherCoding": 3,
    "AetherScheduling": 4,
    "AetherSecurity": 5,
    "AetherTransport": 6,
    "AetherUploader": 7,
    "AetherReceiver": 7,
}


def main() -> int:
    raw = subprocess.run(
        ["swift", "package", "describe", "--type", "json"], check=True, capture_output=True, text=True
    ).stdout
    package = json.loads(raw[raw.index("{"):])
    targets = {t["name"]: t for t in package["targets"]}
    failures = []
    for name, target in targets.items():
        deps = target.get("target_dependencies", []) + target.get("product_dependencies", [])
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
        elif target.get("type") == "library":
            failures.append(f"library target {name} has no layer; add it to LAYERS in {sys.argv[0]}")
    for line in failures:
        print("layering: " + line, file=sys.stderr)
    if not failures:
        checked = sum(1 for n in targets if n in LAYERS)
        print(f"layering: {checked} modules checked, every dependency points to a lower layer")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
