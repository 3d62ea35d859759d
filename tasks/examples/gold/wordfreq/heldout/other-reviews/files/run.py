"""A tiny sentiment classifier: counts positive and negative words in each review.

The experiment trains nothing; it "evaluates" the classifier on a fixed test set and
prints its accuracy. The extension asked of the agent: treat words case-insensitively.
"""

import time

POSITIVE = {"good", "great", "excellent", "fun"}
NEGATIVE = {"bad", "awful", "boring", "dull"}

TEST_SET = [
    ("Excellent and fun", 1),
    ("Dull, Boring, Bad", 0),
    ("a great cast", 1),
    ("not good at all", 0),
    ("FUN ride", 1),
    ("awful ending", 0),
    ("Good pacing, great music", 1),
    ("Boring", 0),
]


def tokens(text):
    return [w.strip(",.!?") for w in text.split()]


def predict(text):
    words = tokens(text)
    score = sum(w in POSITIVE for w in words) - sum(w in NEGATIVE for w in words)
    return 1 if score > 0 else 0


def main():
    time.sleep(0.2)  # stands in for the experiment's real work
    correct = sum(predict(text) == label for text, label in TEST_SET)
    print(f"evaluated {len(TEST_SET)} reviews")
    print(f"ACCURACY: {correct / len(TEST_SET)}")


if __name__ == "__main__":
    main()
