"""Uploads for "papers like these": texts out of .txt and .bib, one clear message for anything else."""
import pytest

from search.uploads import MAX_UPLOAD_BYTES, UploadError, texts_from_upload


def test_bib_entries_give_abstracts_else_titles():
    bib = (b"@inproceedings{a, title={A {Big} Title}, abstract={We study {LoRA} for $x$.}}\n"
           b"@misc{b, title={Only a title}}\n@misc{c, year={2020}}\n")
    assert texts_from_upload("mine.bib", bib) == ["We study LoRA for $x$.", "Only a title"]


def test_txt_gives_one_text_per_non_empty_line():
    assert texts_from_upload("a.TXT", "\ufefffirst abstract\n\n  second one \n".encode()) == [
        "first abstract", "second one"]


@pytest.mark.parametrize("name, data, words", [
    ("a.txt", b"", "empty"),
    ("a.txt", b"  \n\n", "empty"),
    ("a.txt", b"\x89PNG\r\n\x1a\n\x00\x00", "binary"),
    ("a.txt", b"caf\xe9", "not valid UTF-8"),
    ("a.txt", "caf\xe9 in UTF-16".encode("utf-16"), None),  # encode() writes the BOM
    ("a.txt", b"x" * (MAX_UPLOAD_BYTES + 1), "limit"),
    ("a.pdf", b"%PDF-1.4", ".txt file"),
    ("a.bib", b"this is not bibtex", "no entry"),
])
def test_bad_uploads_get_a_message_naming_the_file(name, data, words):
    if words is None:  # not bad after all: a BOM-marked UTF-16 file reads as corpus files do
        assert texts_from_upload(name, data) == ["café in UTF-16"]
        return
    with pytest.raises(UploadError, match=words) as e:
        texts_from_upload(name, data)
    assert name in str(e.value)
