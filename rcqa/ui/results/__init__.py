"""What the pages compute, each kept where it pays: answers per model and text (st.cache_data; a long passage's
through the job queue, kept in this session), explanations in the disk result cache and this session, the methods'
comparison in this session. Explanations and comparisons, and on a click the answer lens, the interventions and the
token maps, go through the job queue (rcqa.ui.queue), which runs them in its worker processes.

answers: the model's answer (a Reading) and a window's tokens; prices: an explanation's price and the server's budget;
explanations: keyed, stored, and computed on a click; comparisons: the methods' comparison; per_layer: the lens,
margins, knock-outs and token maps, on request; requested: the ask buttons and queued, which the others use.
"""
