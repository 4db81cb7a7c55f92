"""Classical character language models: the n-gram model (numpy, modified Kneser-Ney) and the
unbounded-order model over the text index. Their restorers live in
:mod:`apollo_restore.restoration.members.ngram` and :mod:`apollo_restore.restoration.members.infini`.

    apollo-restore ngram --prepared DIR --source ddb --order 8 --out ddb-8.npz
"""

from apollo_restore.ngram.model import NgramModel

__all__ = ["NgramModel"]
