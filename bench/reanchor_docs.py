"""Writes the documents for the re-anchoring benchmark: a ~1 MB version 1, comment bodies
quoting 1,000 of its passages, and a version 2 where passages moved, were edited or deleted."""
import json
import random
import sys

out = sys.argv[1]
random.seed(7)
words = "review anchor durable comment version section cache latency quote context".split()


def sentence(i):
    filler = " ".join(random.choice(words) for _ in range(22))
    return f"Passage {i} says {filler} and ends here."


passages = [sentence(i) for i in range(6000)]
v1 = "".join((f"<h2>Part {i}</h2>" if i % 50 == 0 else "") + f"<p>{p}</p>" for i, p in enumerate(passages))
with open(f"{out}/v1.html", "w") as f:
    f.write(f"<h1>Re-anchoring benchmark</h1>{v1}")

quoted = random.sample(range(6000), 1000)
with open(f"{out}/comments.jsonl", "w") as f:
    for i in quoted:
        exact = passages[i][: 40 + i % 60]
        f.write(json.dumps({"body": f"About passage {i}", "locator": {"quote": {"exact": exact}}}) + "\n")

edited = list(passages)
for i in range(0, 6000, 10):
    edited[i] = edited[i].replace(" says ", " now states ")  # lightly edited
deleted = set(range(5, 6000, 97))
kept = [p for i, p in enumerate(edited) if i not in deleted]
random.shuffle(kept[:600])  # some passages move
v2 = "".join(f"<p>{p}</p>" for p in kept)
with open(f"{out}/v2.html", "w") as f:
    f.write(f"<h1>Re-anchoring benchmark</h1>{v2}")
