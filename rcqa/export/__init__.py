"""A trained run as an embedded model: fp16 weights, the checkpoint chosen, and the model card that says how it was
made and how well it answers.

For a run trained with unanswerable questions (the squad2 recipe) the card also holds what decoding with "no answer"
needs and what it scores: the checkpoint with the best v2.0 F1 on the run's held-out train articles, the threshold
tuned on them (the official v2.0 script's best_f1_thresh), SQuAD v1.1 dev with answers forced, and a v2-style dev
set built from v1.1 dev (rcqa.negatives), overall and for each kind of negative. Dev never chooses anything.

checkpoints: a run's kept models, each exported or scored on the held-out questions, and the best of them;
abstention: the threshold, the dev and hard-set scores, the abstention trade-off; card: rcqa_card.json and the
probes on it; card_readme: the card's README.md.
"""
