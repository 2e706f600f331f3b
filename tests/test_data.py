"""Offline corpora, benchmarks and batching."""
import pytest
import torch

from lmcourse.data import (
    analogy_questions,
    gensim_data_path,
    lm_batches,
    near_duplicates,
    news_documents,
    polarity_sentences,
    random_windows,
    simlex999,
    toy_corpus,
    toy_corpus_names,
    train_test_split,
    wiki_articles,
    wiki_text,
    wordsim353,
)

CORPORA = {"news": news_documents, "wiki": wiki_articles}


@pytest.mark.parametrize("corpus, sizes", [("news", (231, 29, 29)), ("wiki", (76, 10, 10))])
def test_corpus_split_is_fixed_disjoint_and_complete(corpus, sizes):
    documents = CORPORA[corpus]
    splits = {s: documents(s) for s in ("train", "valid", "test")}
    assert tuple(len(splits[s]) for s in ("train", "valid", "test")) == sizes
    assert sorted(sum(splits.values(), [])) == sorted(documents("all"))
    assert documents("valid") == splits["valid"]  # deterministic


@pytest.mark.parametrize("corpus", CORPORA)
def test_no_held_out_article_repeats_a_training_article(corpus):
    """Neither exactly nor nearly: no valid or test article shares half its word 5-grams with a
    training article (the raw news file holds 7 byte-identical copies and 4 near copies)."""
    documents = CORPORA[corpus]
    train, held_out = documents("train"), documents("valid") + documents("test")
    assert not set(train) & set(held_out)
    assert near_duplicates(train + held_out) == []


def test_near_duplicates_finds_copies_extensions_and_merges():
    a = "the cat sat on the mat and looked at the dog for a long while"
    b = "stocks fell sharply on monday as investors weighed the latest figures from the bank"
    c = "rain is expected across the south coast tonight with strong winds near the ranges"
    assert near_duplicates([a, b, a]) == [2]                      # a copy
    assert near_duplicates([a, b, a + " then it slept"]) == [2]   # one sentence added
    assert near_duplicates([a, c, c + " " + b + " " + a]) == [2]  # two stories appended
    assert near_duplicates([a, b, c]) == []
    with pytest.raises(ValueError, match="threshold"):
        near_duplicates([a, b], threshold=0.0)


def test_news_corpus_drops_the_repeated_articles():
    raw = gensim_data_path("lee_background.cor").read_text(encoding="utf-8").splitlines()
    raw = [line.strip() for line in raw if line.strip()]
    assert len(raw) == 300 and len(set(raw)) == 293    # 7 byte-identical copies
    assert len(news_documents("all")) == 289           # and 4 near copies


def test_wiki_corpus_is_large_and_clean():
    articles = wiki_articles("all")
    assert sum(len(a.split()) for a in articles) >= 400_000
    text = "\n".join(articles)
    for markup in ("[[", "]]", "{{", "}}", "==", "''", "<ref", "</", "|", "&nbsp;", "&amp;", "http",
                   "Category:", "File:", "thumb|"):
        assert markup not in text, f"wiki markup {markup!r} survived"
    assert "Anarchism is a political philosophy" in text  # case and punctuation kept


def test_wiki_text_keeps_prose_and_drops_markup():
    wikitext = ("'''Albedo''' is the [[diffuse reflection|measure]] of reflection{{cite|x}} of light by a surface."
                "<ref>A</ref>\n"
                "==History==\n* a list item that is long enough to be counted as words\n"
                "{| class=\"wikitable\"\n|-\n! Header\n|-\n| a table cell with several words in it here\n|}\n"
                "It is measured on a scale from zero to one, as the text here says.\n"
                "==References==\nEverything here is a reference and should go away entirely.")
    assert wiki_text(wikitext).splitlines() == [
        "Albedo is the measure of reflection of light by a surface.",
        "It is measured on a scale from zero to one, as the text here says."]
    with pytest.raises(TypeError, match="wikitext"):
        wiki_text(b"bytes")


@pytest.mark.parametrize("corpus", CORPORA)
def test_corpus_rejects_unknown_split(corpus):
    with pytest.raises(ValueError, match="split must be one of"):
        CORPORA[corpus]("dev")


def test_polarity_sentences_are_balanced_and_decoded():
    data = polarity_sentences()
    assert len(data) == 200
    assert sum(label for _, label in data) == 100
    assert all(isinstance(t, str) and t for t, _ in data)
    assert any("—" in t for t, _ in data)  # Windows-1252 em dash decoded


def test_benchmarks_have_their_published_sizes():
    assert len(wordsim353()) == 353
    assert len(simlex999()) == 999
    questions = analogy_questions()
    assert len(questions) == 19544
    assert questions[0] == ("capital-common-countries", "athens", "greece", "baghdad", "iraq")
    assert all(w == w.lower() for pair in wordsim353() for w in pair[:2])


def test_gensim_data_path_reports_missing_files():
    with pytest.raises(FileNotFoundError, match="not in gensim"):
        gensim_data_path("no_such_file.txt")
    with pytest.raises(TypeError, match="name"):
        gensim_data_path(3)


def test_toy_corpus():
    assert "bank" in toy_corpus_names()
    bank = toy_corpus("bank")
    assert len(bank) == 6 and all("bank" in s for s in bank)
    with pytest.raises(ValueError, match="name must be one of"):
        toy_corpus("nope")


def test_lm_batches_shift_targets_and_continue_rows():
    ids = torch.arange(26)
    batches = lm_batches(ids, batch_size=2, seq_len=5)
    x0, y0 = batches[0]
    assert x0.tolist() == [[0, 1, 2, 3, 4], [13, 14, 15, 16, 17]]
    assert y0.tolist() == [[1, 2, 3, 4, 5], [14, 15, 16, 17, 18]]
    x1, _ = batches[1]
    assert x1[:, 0].tolist() == [5, 18]  # row b continues the same text
    assert all(torch.equal(x[:, 1:], y[:, :-1]) for x, y in batches)
    assert batches[-1][1][0, -1].item() == 12  # the last target of row 0 is its last token


def test_lm_batches_validation():
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        lm_batches(torch.arange(10), 0, 2)
    with pytest.raises(ValueError, match="too few"):
        lm_batches(torch.arange(3), 2, 2)
    with pytest.raises(ValueError, match="one-dimensional"):
        lm_batches(torch.zeros(2, 3, dtype=torch.long), 1, 2)


def test_random_windows():
    ids = torch.arange(100)
    x, y = random_windows(ids, 4, 8, generator=torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 8)
    assert torch.equal(y, x + 1)
    with pytest.raises(ValueError, match="longer than seq_len"):
        random_windows(torch.arange(5), 1, 5)


def test_train_test_split():
    train, test = train_test_split(list(range(10)), 0.3, seed=1)
    assert len(test) == 3 and sorted(train + test) == list(range(10))
    assert train_test_split(list(range(10)), 0.3, seed=1) == (train, test)
    with pytest.raises(ValueError, match="test_fraction"):
        train_test_split([1, 2], 1.0)
    with pytest.raises(ValueError, match="items must not be empty"):
        train_test_split([], 0.5)
