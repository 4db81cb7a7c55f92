"""What the user reads: edition forms, demotions of doubtful readings, calibrated probabilities,
notes and labels."""
