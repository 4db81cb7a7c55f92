"""What the user reads: edition forms, notes and labels around the readings the ranking
(:mod:`apollo_restore.restoration.ranking`) orders; presentation never reorders."""
