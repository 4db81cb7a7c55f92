"""Character n-gram language model (numpy, modified Kneser-Ney) and its gap filler: the
classical baseline, and a component to combine with the neural restorer.

    apollo-restore ngram --prepared DIR --source ddb --order 8 --out ddb-8.npz
"""

from apollo_restore.ngram.model import NgramModel

__all__ = ["NgramModel"]
