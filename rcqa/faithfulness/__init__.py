"""Faithfulness of attributions: delete the words a method ranks first and see whether the answer suffers more than
when random words are deleted (deletion curves, ERASER's comprehensiveness and sufficiency, AOPC)."""
