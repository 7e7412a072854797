#!/usr/bin/env python3
"""A campaign config whose space is exactly the winners of one or more results tables.

usage: winners_config.py BASE_CONFIG TABLE [TABLE...] > OUT.yaml

The gpu section and budgets come from BASE_CONFIG; the problems are the tables' rows that have a winner, and
each distinct winning point is a space of its own (one value per tunable). `tune compile OUT.yaml` then
compiles the very candidates the tables ship (scripts/same_code.sh compares them across two trees)."""
import sys

import yaml


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    config = yaml.safe_load(open(argv[1]))
    problems, templates, seen_problems, seen_points = [], [], set(), set()
    for path in argv[2:]:
        for row in yaml.safe_load(open(path))["problems"]:
            winner = row.get("winner")
            if not winner:
                continue
            point = (winner["template"], tuple(sorted(winner["config"].items())))
            if point not in seen_points:
                seen_points.add(point)
                templates.append({"name": winner["template"],
                                  "space": {k: [v] for k, v in winner["config"].items()}})
            if row["name"] not in seen_problems:
                seen_problems.add(row["name"])
                problems.append({k: row[k] for k in
                                 ("name", "m", "n", "k", "precision", "output", "layout", "alpha", "beta")
                                 if k in row})
    config["problems"] = problems
    config["templates"] = templates
    config["output"] = "/tmp/winners.yaml"
    yaml.safe_dump(config, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main(sys.argv)
