"""Regenerate ``glossary.md`` from the term list below, and each chapter's key-terms cell, which
links here (``python scripts/glossary.py [chapter ...]``; all chapters by default).

Each term names the chapter that teaches it. A chapter becomes a link once its file exists and
is listed in ``_toc.yml``; until then the glossary names it in plain text, so the book always
builds. ``tests/test_book_pages.py`` checks that the committed page matches this list and that
every link resolves.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from book_sources import ROOT, doc_link, page_title, source_path  # noqa: E402

#: chapter file (under chapters/) -> title used in the glossary
CHAPTERS = {
    "01_pretraining": "1 Pretraining",
    "02_language_models": "2 Language models",
    "03_word_embeddings": "3 Word embeddings",
    "04_rnn_lstm": "4 RNN and LSTM",
    "04b_char_lm": "4 A character language model and truncated BPTT",
    "04c_gradient_clipping": "4 Gradient clipping and the cliff",
    "05_elmo": "5 ELMo",
    "05b_elmo_in_use": "5 Using ELMo",
    "06_attention": "6 Attention",
    "06b_self_attention": "6 Self-attention and multi-head attention",
    "07_transformer": "7 Transformer",
    "07b_transformer_experiments": "7 Transformer experiments",
    "08_gpt": "8 GPT",
    "09_bert": "9 BERT",
    "09b_bert_in_use": "9 Fine-tuning BERT and reading its heads",
    "10_after_bert": "10 After BERT",
}

#: (English term, Chinese term, one-line definition, chapter file); Chinese terms follow the
#: sources where they use one, common usage otherwise
TERMS: list[tuple[str, str, str, str]] = [
    # 1 Pretraining
    ("pretraining", "预训练", "Training a model on a large, often unlabelled, task before it is adapted to the task of interest.", "01_pretraining"),
    ("transfer learning", "迁移学习", "Reusing what a model learnt on one task to learn another with fewer labels.", "01_pretraining"),
    ("fine-tuning", "微调", "Continuing to train all (or the upper) pretrained weights on the downstream task.", "01_pretraining"),
    ("freezing", "冻结参数", "Keeping pretrained weights fixed and training only the new layers on top.", "01_pretraining"),
    ("self-supervised learning", "自监督学习", "Learning from labels the data supplies itself, such as the next word or a masked word: how language models pretrain on raw text.", "01_pretraining"),
    ("downstream task", "下游任务", "The task a pretrained model is finally used for (classification, QA, tagging, ...).", "01_pretraining"),
    ("data augmentation", "数据增强", "Training on randomly altered copies of the inputs (here a digit drawn at a random place), so the model learns to ignore the change.", "01_pretraining"),
    # 2 Language models
    ("language model", "语言模型", "A probability distribution over sequences of tokens, usually factorised word by word.", "02_language_models"),
    ("chain rule", "链式法则", r"$P(w_1 \dots w_n) = \prod_t P(w_t \mid w_1 \dots w_{t-1})$: the exact factorisation every LM starts from.", "02_language_models"),
    ("Markov assumption", "马尔可夫假设", "The next word depends only on the previous n-1 words.", "02_language_models"),
    ("n-gram", "n 元语法", "A sequence of n words; an n-gram model conditions on the previous n-1 (a bigram on one).", "02_language_models"),
    ("token", "词元", "The unit a model reads: a word, a subword piece or a character, mapped to an integer id.", "02_language_models"),
    ("smoothing", "平滑", "Moving probability mass to unseen n-grams so that no sentence gets probability zero.", "02_language_models"),
    ("add-k smoothing", "加 k 平滑", "Adding k to every count before normalising (k = 1: Laplace smoothing).", "02_language_models"),
    ("perplexity", "困惑度", r"$\exp$ of the average negative log-likelihood per token; lower is better.", "02_language_models"),
    ("cross-entropy", "交叉熵", "The average negative log-probability a model gives the tokens that occur; in base 2 it is bits per word, and 2 to that power is the perplexity.", "02_language_models"),
    ("Kneser-Ney smoothing", "Kneser-Ney 平滑", "Absolute discounting whose lower-order model counts how many different words precede a word (its continuation count), not how often it occurs.", "02_language_models"),
    ("Zipf's law", "齐普夫定律", "A word's frequency falls roughly as one over its frequency rank, so most distinct words are rare.", "02_language_models"),
    ("early stopping", "早停", "Ending training when the loss on held-out validation text stops falling, and keeping the weights from the best epoch.", "02_language_models"),
    ("neural network language model (NNLM)", "神经网络语言模型", "Bengio et al. (2003): embeddings of the previous words, a tanh layer and a softmax over the vocabulary.", "02_language_models"),
    ("softmax", "softmax 归一化", r"$e^{z_i} / \sum_j e^{z_j}$: turns scores into a probability distribution.", "02_language_models"),
    ("out-of-vocabulary word (OOV)", "未登录词", "A word missing from the vocabulary, mapped to <unk> or split into subwords.", "02_language_models"),
    # 3 Word embeddings
    ("one-hot encoding", "独热编码", "A vector with a single 1 at the word's index; all pairs of words are orthogonal.", "03_word_embeddings"),
    ("word embedding", "词嵌入 / 词向量", "A dense learnt vector per word; similar words get nearby vectors.", "03_word_embeddings"),
    ("embedding matrix", "嵌入矩阵", "The |V| x d table of word vectors; multiplying a one-hot vector by it selects a row.", "03_word_embeddings"),
    ("word2vec", "word2vec", "Mikolov et al. (2013): log-linear models (CBOW, skip-gram) that learn word vectors from context prediction.", "03_word_embeddings"),
    ("CBOW", "连续词袋模型", "Predicts a word from the average of its context vectors (order ignored).", "03_word_embeddings"),
    ("skip-gram", "跳字模型", "Predicts each context word from the centre word.", "03_word_embeddings"),
    ("negative sampling", "负采样", "Replaces the full softmax by telling the true context word apart from a few sampled noise words.", "03_word_embeddings"),
    ("hierarchical softmax", "层次 softmax", "A softmax computed along a binary tree over the vocabulary, in O(log |V|) steps.", "03_word_embeddings"),
    ("GloVe", "GloVe 全局词向量", "Pennington et al. (2014): word vectors fitted to the logarithm of co-occurrence counts.", "03_word_embeddings"),
    ("cosine similarity", "余弦相似度", "The dot product of two vectors divided by their lengths.", "03_word_embeddings"),
    ("subsampling", "高频词下采样", "word2vec's dropping of frequent words' occurrences at random before training (each kept with a probability that falls with its frequency), which speeds training and improves the vectors of rarer words (Mikolov et al. 2013).", "03_word_embeddings"),
    ("pointwise mutual information (PMI)", "点互信息", r"$\log \frac{P(w, c)}{P(w)P(c)}$: how much more often two words co-occur than independence predicts; positive PMI (PPMI) clips it at zero, and skip-gram with negative sampling factorises a shifted PMI matrix.", "03_word_embeddings"),
    ("word analogy", "词类比", "Solving a : b = c : ? by the word nearest to b - a + c (3CosAdd), a test of whether relations are parallel offsets between word vectors.", "03_word_embeddings"),
    ("polysemy", "一词多义", "One word with several meanings (bank of a river / bank for money); a static vector mixes them.", "03_word_embeddings"),
    # 4 RNN and LSTM
    ("recurrent neural network (RNN)", "循环神经网络", "A network that reads a sequence step by step, carrying a hidden state with shared weights.", "04_rnn_lstm"),
    ("backpropagation through time (BPTT)", "随时间反向传播", "Backpropagation through the unrolled recurrence, one copy of the cell per time step.", "04_rnn_lstm"),
    ("vanishing gradient", "梯度消失", "Gradients shrinking geometrically as they flow back over many steps or layers.", "04_rnn_lstm"),
    ("exploding gradient", "梯度爆炸", "Gradients growing geometrically over many steps; tamed by gradient clipping.", "04_rnn_lstm"),
    ("LSTM", "长短期记忆网络", "Hochreiter and Schmidhuber (1997): an RNN with a gated, additive cell state that eases vanishing gradients.", "04_rnn_lstm"),
    ("forget gate", "遗忘门", "The LSTM gate (added in 2000) that decides how much of the old cell state to keep.", "04_rnn_lstm"),
    ("cell state", "细胞状态", "The LSTM's memory line, updated by addition rather than by repeated matrix products.", "04_rnn_lstm"),
    ("GRU", "门控循环单元", "Cho et al. (2014): a lighter gated RNN with update and reset gates and no separate cell.", "04_rnn_lstm"),
    ("bidirectional RNN", "双向循环神经网络", "A forward and a backward RNN over the same sentence, their states joined at each position, for models that represent a sentence rather than predict its next word.", "04_rnn_lstm"),
    ("truncated backpropagation through time (truncated BPTT)", "截断的随时间反向传播", "BPTT within windows of k steps: the state may cross a window's boundary, the gradient does not.", "04b_char_lm"),
    ("bits per character (BPC)", "每字符比特数", "A character model's cross-entropy in base 2, per character: the number of bits an ideal code built on the model would spend on each character.", "04b_char_lm"),
    ("gradient clipping", "梯度裁剪", "Rescaling the gradient when its norm exceeds a threshold.", "04c_gradient_clipping"),
    # 5 ELMo
    ("ELMo", "ELMo", "Peters et al. (2018): word vectors taken from the layers of a pretrained bidirectional LSTM LM.", "05_elmo"),
    ("bidirectional language model (biLM)", "双向语言模型", "A forward and a backward LM trained together, sharing the input and output layers.", "05_elmo"),
    ("contextual embedding", "上下文相关词向量", "A word vector computed from the whole sentence, so one word gets different vectors in different contexts.", "05_elmo"),
    ("scalar mix", "标量混合 (各层加权求和)", r"ELMo's $\gamma \sum_j \mathrm{softmax}(s)_j h_j$: a learnt weighting of the biLM's layers.", "05b_elmo_in_use"),
    ("feature-based pretraining", "基于特征的预训练", "Feeding a frozen pretrained model's outputs as extra features to a task model.", "05b_elmo_in_use"),
    # 6 Attention
    ("attention", "注意力机制", "A weighted average of values, with weights from how well a query matches each key.", "06_attention"),
    ("query, key, value", "查询、键、值 (Q、K、V)", "The three projections of attention: what is sought, what is offered to match, what is returned.", "06_attention"),
    ("scaled dot-product attention", "缩放点积注意力", r"$\mathrm{softmax}(QK^\top / \sqrt{d_k})\,V$; the scaling keeps the softmax from saturating.", "06_attention"),
    ("sequence-to-sequence model (seq2seq)", "序列到序列模型", "An encoder reads the source sequence and a decoder writes the target one token at a time (Sutskever et al. 2014); without attention the decoder sees the source only through one vector.", "06_attention"),
    ("additive attention", "加性注意力", r"Bahdanau et al.'s score $v^\top \tanh(W q + U k)$, a one-hidden-layer network of the query and the key; Luong's concat score is the same function.", "06_attention"),
    # 6 Attention, second part: self-attention and multi-head attention
    ("self-attention", "自注意力", "Attention in which queries, keys and values all come from the same sequence.", "06b_self_attention"),
    ("causal mask", "因果掩码", "Blocks attention to later positions (scores set to -inf) so a decoder cannot see the future.", "06b_self_attention"),
    ("padding mask", "填充掩码", "Blocks attention to padding tokens of shorter sequences in a batch.", "06b_self_attention"),
    ("multi-head attention", "多头注意力", r"Several attentions with their own Q, K, V projections, concatenated and mixed by $W^O$.", "06b_self_attention"),
    # 7 Transformer
    ("Transformer", "Transformer", "Vaswani et al. (2017): an encoder-decoder built from attention and feed-forward layers only.", "07_transformer"),
    ("positional encoding", "位置编码（位置向量）", "Vectors added to the embeddings to tell attention where each token is (sinusoidal or learnt).", "07_transformer"),
    ("encoder", "编码器", "The stack that reads the whole input with unmasked self-attention.", "07_transformer"),
    ("decoder", "解码器", "The stack that generates the output left to right with masked self-attention (and cross-attention).", "07_transformer"),
    ("cross-attention", "交叉注意力", "Decoder attention whose queries come from the decoder and keys and values from the encoder output.", "07_transformer"),
    ("residual connection", "残差连接", r"Adding a sublayer's input to its output, $x + F(x)$, so signals and gradients pass through deep stacks.", "07_transformer"),
    ("layer normalisation", "层归一化", "Normalising each token's vector to zero mean and unit variance, then scaling and shifting.", "07_transformer"),
    ("feed-forward network (FFN)", "前馈神经网络", r"The per-token two-layer MLP of each Transformer layer. With $d_{ff} = 4d$ it holds $8d^2$ weights: two thirds of an encoder (or GPT) layer's $12d^2$, half of a decoder layer's $16d^2$ with cross-attention (biases and LayerNorms aside).", "07_transformer"),
    ("teacher forcing", "教师强制", "Training a decoder on the true previous tokens (shifted targets), all positions in parallel.", "07_transformer"),
    ("beam search", "束搜索", "Decoding that keeps the k most probable partial outputs at every step.", "07_transformer"),
    ("learning-rate warm-up", "学习率预热", "Raising the learning rate from near zero over the first steps, then decaying it.", "07_transformer"),
    ("weight tying", "权重绑定 (输入输出嵌入共享)", "Using the token embedding matrix also as the output layer's weights (Press and Wolf 2017), which saves a V x d matrix.", "07_transformer"),
    # 7 Transformer, second part: the experiments
    ("relative position bias", "相对位置偏置", "A learned number per head and offset i - j added to the attention scores (T5); it names no absolute position, so it serves any length.", "07b_transformer_experiments"),
    ("length extrapolation", "长度外推", "Applying to inputs longer than any seen in training what was learned at the training length.", "07b_transformer_experiments"),
    ("Pre-LN and Post-LN", "前置层归一化 / 后置层归一化", "Where a Transformer layer puts its LayerNorm: after adding each sublayer's output to the residual stream (Post-LN, the original Transformer) or at each sublayer's input (Pre-LN, GPT-2 on), which can train without warm-up (Xiong et al. 2020).", "07b_transformer_experiments"),
    # 8 GPT
    ("GPT", "GPT", "Radford et al. (2018): a Transformer decoder pretrained as a left-to-right LM, then fine-tuned.", "08_gpt"),
    ("autoregressive language model", "自回归语言模型", "A model of p(x) as a product of next-token predictions, each seeing only the past.", "08_gpt"),
    ("temperature", "温度", "Dividing logits by T before the softmax: T < 1 sharpens, T > 1 flattens the distribution.", "08_gpt"),
    ("top-k sampling", "top-k 采样", "Sampling the next token among the k most probable ones only.", "08_gpt"),
    ("nucleus (top-p) sampling", "核采样 (top-p)", "Sampling among the smallest set of tokens whose probabilities sum to p.", "08_gpt"),
    ("subword", "子词", "A piece of a word (BPE, WordPiece): rare words split into known pieces, so no word is out of vocabulary.", "08_gpt"),
    ("prompt", "提示", "The text a language model is given to continue; it may hold instructions and worked examples.", "08_gpt"),
    ("natural language inference (NLI)", "自然语言推理", "Deciding whether a premise entails, contradicts or is neutral to a hypothesis (GPT-1's entailment task).", "08_gpt"),
    ("zero-shot", "零样本", "Doing a task from its description alone, without any example or gradient update.", "08_gpt"),
    ("GPT-2", "GPT-2", "Radford et al. (2019): GPT with Pre-LN layers, a byte-level BPE and up to 1.5B parameters, trained on WebText; it did some tasks zero-shot.", "08_gpt"),
    ("key-value cache (KV cache)", "KV 缓存 (键值缓存)", "Keeping every layer's keys and values of the tokens already read, so that generating a token computes only the new position.", "08_gpt"),
    # 9 BERT
    ("BERT", "BERT", "Devlin et al. (2018): a Transformer encoder pretrained with masked LM and NSP, then fine-tuned.", "09_bert"),
    ("cloze task", "完形填空", "Filling in words blanked out of a text from the words around them (Taylor, 1953); BERT's masked language model is a cloze task.", "09_bert"),
    ("masked language model (MLM)", "掩码语言模型", "Choosing 15% of the tokens and predicting each from both sides; of the chosen, 80% become [MASK], 10% a random token and 10% stay as they are (about 12%, 1.5% and 1.5% of all tokens).", "09_bert"),
    ("next sentence prediction (NSP)", "下一句预测", "BERT's second task: does sentence B follow sentence A, or is it random?", "09_bert"),
    ("autoencoding language model", "自编码语言模型", "A model trained to reconstruct corrupted input (BERT), as opposed to predicting left to right.", "09_bert"),
    ("WordPiece", "WordPiece", "BERT's subword tokenizer: greedy longest-match-first, continuation pieces marked ##.", "09_bert"),
    ("byte-pair encoding (BPE)", "字节对编码", "A subword vocabulary built by repeatedly merging the most frequent adjacent pair.", "09_bert"),
    ("segment embedding", "分段嵌入 / 文本向量", "One of two learnt vectors added to every token of sentence A or sentence B.", "09_bert"),
    ("[CLS] and [SEP]", "[CLS] 与 [SEP]", "Special tokens: [CLS] starts the input and its vector feeds sentence-level heads; [SEP] ends each sentence.", "09_bert"),
    ("extractive question answering", "抽取式问答", "Answering with a span of the given passage, by predicting its start and end positions.", "09b_bert_in_use"),
    ("part-of-speech tagging", "词性标注", "Labelling every word with its grammatical class (noun, verb, ...): a token-level task.", "05_elmo"),
    ("mean pooling", "平均池化", "Averaging a sentence's token vectors (padding excluded) into one sentence vector.", "09b_bert_in_use"),
    ("label smoothing", "标签平滑", "Training against targets that give a little probability (0.1 in all, in the Transformer) to the wrong classes; BERT did not use it.", "09_bert"),
    ("GELU", "GELU 激活函数 (高斯误差线性单元)", r"$x\,\Phi(x)$, the input times the standard normal CDF at it: BERT's and GPT's activation; its tanh form is an approximation.", "09_bert"),
    ("whole word masking", "全词掩码", "Masking all WordPiece pieces of a word together rather than single pieces.", "09_bert"),
    ("likelihood gain (WordPiece)", "似然增益", "How much merging a pair ab raises the training text's unigram log-likelihood, about count(ab)·log(N·count(ab)/(count(a)count(b))); the ratio inside the log alone is PMI.", "09_bert"),
    ("entity-level F1", "实体级 F1", "A tagger's score over whole entities: a predicted entity counts only if its span and type both match; harsher than word accuracy.", "09b_bert_in_use"),
    ("position embedding", "位置嵌入 / 位置向量", "BERT's learnt table of one vector per position (512 rows), added to each token's vector; it is why BERT reads at most 512 tokens.", "09_bert"),
    ("probe", "探针", "A simple classifier, often a logistic regression, fitted on a frozen model's vectors to measure what they encode without fine-tuning the model.", "09_bert"),
    ("partial fine-tuning", "部分微调", "Training only the top layers and the new head while the lower pretrained layers stay frozen; a probe is the extreme case.", "09_bert"),
    ("sliding window", "滑动窗口", "Reading a text longer than the model's limit as overlapping windows and combining their predictions.", "09b_bert_in_use"),
    ("multilingual BERT (mBERT)", "多语言BERT", "One BERT pretrained on the Wikipedias of 104 languages with a shared WordPiece vocabulary; fine-tuned in one language, it transfers to others zero-shot.", "09b_bert_in_use"),
    # 10 After BERT
    ("RoBERTa", "RoBERTa", "Liu et al. (2019): BERT-large's architecture trained longer on 10x the data, without NSP, with dynamic masks.", "10_after_bert"),
    ("static masking", "静态掩码", "Masking each sequence once in preprocessing (BERT: 10 copies with different masks), so later epochs reuse the same masks.", "10_after_bert"),
    ("dynamic masking", "动态掩码", "Drawing a new mask every time a sequence is fed, instead of a few fixed masks.", "10_after_bert"),
    ("ALBERT", "ALBERT", "Lan et al. (2019): factorised embeddings and cross-layer sharing shrink BERT-base to 12M parameters.", "10_after_bert"),
    ("factorised embedding parameterisation", "词嵌入矩阵分解", "A V x E table followed by an E x H projection instead of a V x H table.", "10_after_bert"),
    ("cross-layer parameter sharing", "跨层参数共享", "All layers reuse the same weights (or the same attention or FFN weights).", "10_after_bert"),
    ("sentence-order prediction (SOP)", "句子顺序预测", "ALBERT's replacement for NSP: are two consecutive segments in the right order or swapped?", "10_after_bert"),
    ("XLNet", "XLNet", "Yang et al. (2019): an autoregressive LM over random factorisation orders, realised with attention masks.", "10_after_bert"),
    ("permutation language modelling", "排列语言模型", "Maximising the likelihood over factorisation orders; positions stay, only the prediction order changes.", "10_after_bert"),
    ("two-stream attention", "双流注意力", "XLNet's two vectors at every position: the content stream and the query stream.", "10_after_bert"),
    ("content stream and query stream", "内容流 / 查询流", "XLNet: the content stream sees its own token and the tokens before it in the factorisation order; the query stream sees its own position and those earlier tokens, but never its own token.", "10_after_bert"),
    ("partial prediction", "部分预测", "XLNet predicts only the last 1/K of each factorisation order (K = 6 or 7), whose tokens have the most context to go on.", "10_after_bert"),
    ("Transformer-XL", "Transformer-XL", "Dai et al. (2019): a Transformer LM that carries a segment's hidden states into the next (segment-level recurrence) with relative positions; XLNet is built on it.", "10_after_bert"),
    ("ELECTRA", "ELECTRA", "Clark et al. (2020): a discriminator pretrained to spot tokens replaced by a small generator.", "10_after_bert"),
    ("generator and discriminator", "生成器 / 判别器", "ELECTRA's pair: a small masked LM proposes replacements, the discriminator spots which tokens were replaced.", "10_after_bert"),
    ("replaced-token detection", "替换词检测", "Binary classification of every token: original or replaced; every position gives a signal.", "10_after_bert"),
    ("sequence-to-sequence pretraining", "序列到序列预训练", "Pretraining an encoder-decoder to restore corrupted text (MASS, BART, T5).", "10_after_bert"),
    ("MASS", "MASS", "Song et al. (2019): an encoder-decoder pretrained by masking one contiguous fragment (about half the sentence) of the encoder's input and decoding that fragment.", "10_after_bert"),
    ("BART", "BART", "Lewis et al. (2020): a denoising encoder-decoder that restores text corrupted by several noise functions; text infilling with sentence shuffling worked best.", "10_after_bert"),
    ("T5", "T5", "Raffel et al. (2020): an encoder-decoder that casts every task as text-to-text, pretrained by span corruption after a systematic study of objectives.", "10_after_bert"),
    ("span corruption", "片段遮盖", "T5's objective: drop spans (15% of tokens, mean length 3), replace each by a sentinel, predict them.", "10_after_bert"),
    ("sentinel token", "哨兵标记", "T5's placeholder (<extra_id_0>, ...) that stands for one dropped span in the input and names it in the target.", "10_after_bert"),
    ("text-to-text", "文本到文本", "T5's framing of every task as text in, text out, with a task prefix.", "10_after_bert"),
    ("Sentence-BERT", "Sentence-BERT 句向量模型", "Reimers and Gurevych (2019): a siamese BERT fine-tuned so that mean-pooled vectors compare by cosine.", "10_after_bert"),
    ("sentence embedding", "句向量", "One vector for a whole sentence, compared with others by cosine (e.g. Sentence-BERT's mean-pooled output).", "10_after_bert"),
    ("bi-encoder", "双塔模型 (孪生网络)", "Encodes each sentence separately into a vector: n passes for n sentences.", "10_after_bert"),
    ("cross-encoder", "交叉编码器 / 交互式编码器 (单塔)", "Reads both sentences together: accurate, but one pass per pair.", "10_after_bert"),
    ("knowledge distillation", "知识蒸馏", "Training a small student to match a large teacher's softened output distribution.", "10_after_bert"),
    ("teacher and student models", "教师模型 / 学生模型", "Distillation's pair: the large trained model whose outputs are the targets, and the small model trained on them.", "10_after_bert"),
    ("dark knowledge", "暗知识", "Hinton et al.'s name for what a teacher's small probabilities on wrong classes say about similarity, passed on by soft targets.", "10_after_bert"),
    ("DistilBERT", "DistilBERT", "Sanh et al. (2019): a 6-layer student distilled from BERT-base, 40% smaller and 60% faster, keeping 97% of its GLUE score.", "10_after_bert"),
    ("MiniLM", "MiniLM", "Wang et al. (2020): a small student distilled from the teacher's self-attention distributions; the course's sentence encoder all-MiniLM-L6-v2 is one.", "10_after_bert"),
    ("feature extractor", "特征抽取器", "The network that turns tokens into vectors for a task (an LSTM, a CNN or a Transformer); the sources compare them as such.", "10_after_bert"),
    ("in-context learning", "上下文学习", "Doing a task from a prompt, with zero, one or a few solved examples in it and no weight update: GPT-3's term for all three settings.", "08_gpt"),
    ("text infilling", "文本填充", "BART's noise: spans of text (Poisson lengths, mean 3) each replaced by a single mask, so the model must also say how many tokens are missing.", "10_after_bert"),
    ("induction head", "归纳头", "An attention head that finds an earlier occurrence of the current token and copies what followed it: in-context copying that small Transformers learn too.", "08_gpt"),
    ("anisotropy", "各向异性", "Contextual vectors crowding into a narrow cone, so that even unrelated sentences get a high cosine.", "10_after_bert"),
    ("GPT-3", "GPT-3", "Brown et al. (2020): a 175B-parameter GPT (96 layers of width 12,288) that does tasks from a prompt with a few examples, without fine-tuning.", "10_after_bert"),
    ("SpanBERT", "SpanBERT", "Joshi et al. (2020): masks contiguous spans and also predicts them from the two tokens at the span's boundary; no NSP.", "10_after_bert"),
    ("ERNIE", "ERNIE", "Two 2019 models share the name: Baidu's (Sun et al.) masks whole phrases and named entities; Tsinghua's (Zhang et al.) adds knowledge-graph entity embeddings.", "10_after_bert"),
    ("few-shot", "少样本", "Given a handful of examples (in the prompt, for GPT-3) of the task.", "10_after_bert"),
]

HEADER = """# Glossary

The terms of the course in English and in Chinese, the language of the documents the course grew
from, each with a one-line definition and the chapter that explains it.

<!-- generated by scripts/glossary.py from its TERMS list; do not edit by hand -->
"""


def render(root: Path = ROOT) -> str:
    """The text of ``glossary.md``, terms in alphabetical order."""
    lines = [HEADER, "| English | Chinese | Meaning | Chapter |", "|---|---|---|---|"]
    for english, chinese, meaning, chapter in sorted(TERMS, key=lambda t: t[0].lower().strip("[")):
        doc = f"chapters/{chapter}"
        path = source_path(doc, root)
        link = doc_link(doc, page_title(path) if path else CHAPTERS[chapter], root)
        cells = [english, chinese, meaning, link]
        lines.append("| " + " | ".join(c.replace("|", "&#124;") for c in cells) + " |")
    return "\n".join(lines) + "\n"


#: id of the cell, second in every chapter, that lists the chapter's terms with a link here
TERMS_CELL_ID = "glossary-terms"


def terms_cell_source(chapter: str) -> str:
    """The Markdown of ``chapter``'s key-terms cell: its terms, in the order of TERMS."""
    names = [english for english, _, _, c in TERMS if c == chapter]
    return ("**Key terms** (defined, with their Chinese names, in the [glossary](../glossary.md)): "
            + ", ".join(names) + ".")


def update_chapter(chapter: str, root: Path = ROOT) -> bool:
    """Put ``chapter``'s key-terms cell second in its notebook (only the Markdown changes, so
    the outputs stay valid); True if the file changed."""
    path = root / "chapters" / f"{chapter}.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    cell = {"cell_type": "markdown", "id": TERMS_CELL_ID, "metadata": {},
            "source": terms_cell_source(chapter).splitlines(keepends=True)}
    cells = [c for c in nb["cells"] if c.get("id") != TERMS_CELL_ID]
    cells.insert(1, cell)
    if cells == nb["cells"]:
        return False
    nb["cells"] = cells
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return True


def main(chapters: list[str]) -> Path:
    out = ROOT / "glossary.md"
    out.write_text(render(), encoding="utf-8")
    for chapter in chapters:
        if update_chapter(chapter):
            print(f"updated the key terms of chapters/{chapter}.ipynb")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python scripts/glossary.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", metavar="CHAPTER",
                        help=f"chapters whose key-terms cell to update, of {', '.join(CHAPTERS)} (default: all)")
    args = parser.parse_args()
    unknown = [c for c in args.chapters if c not in CHAPTERS]
    if unknown:
        parser.error(f"argument CHAPTER: unknown chapter {', '.join(map(repr, unknown))}; "
                     f"choose from {', '.join(CHAPTERS)}")
    print(main(args.chapters or list(CHAPTERS)))
