"""What rcqa needs to know of an extractive-QA model to cut it at its layers, found from the model's own structure
and one recorded forward pass, never from a list of attribute paths per family.

A ModelAdapter says:
- the blocks, in the order they run (an encoder-decoder's encoder blocks, then its decoder's), and how each was
  called (rcqa.attribution.stack records the calls and replays them);
- the layers: the embeddings output (the hidden states the first block is called with), then each block's output;
- what runs after the last block before the QA head (a pre-LN model's final norm, ModernBERT's prediction head);
- the QA head, where it is a linear layer reading the last of those;
- how the model pools its tokens between blocks, where it does (Funnel): a pooled layer holds fewer states than
  there are tokens, and the adapter says which tokens each of its states pools (token_groups);
- whether the fast prefix-cached stack is used ("fast") or the model's own forward with one layer's states
  replaced ("general"), and why;
- whether the model's first token can read the input, which a "no answer" at [CLS] needs (rcqa.model.QAModel
  .null_token combines it with the tokenizer's layout).

Nothing here touches the shared model: the forward that discovers the order runs a private shallow copy whose
modules of interest are wrapped by recorders (rcqa.attribution.stack explains why not hooks).

calls: a recorded call and how a block's output is read; copies: the private copy with stand-ins and recorders;
structure: where the blocks are; model_adapter: ModelAdapter; discovery: adapter_of and discover, which find it.
"""
