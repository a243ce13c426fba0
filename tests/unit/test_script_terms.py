"""Keyword terms and sentence ends of scripts the ranking was not tuned on: a word keeps its combining marks
(Thai, Devanagari), Thai is read in letter bigrams, Japanese katakana words are whole terms and particles
none, and Arabic ؟ ۔ and Devanagari । end a sentence for compression and the splitter as "." does."""

from __future__ import annotations

import unicodedata

import pytest

from agent_memory.core.text import keyword_terms, letter_bigrams, split_sentences, terms_in, words
from agent_memory.core.tokens import TiktokenCounter
from agent_memory.ingest.splitting import Splitter
from agent_memory.retrieval.compress import GAP, compress, sentence_units

COUNTER = TiktokenCounter("cl100k_base")


def test_a_hindi_word_keeps_its_vowel_signs_and_the_question_meets_the_evidence():
    # \w+ stopped at each vowel sign: "पिछले हफ्ते" was प / छल / हफ / त.
    assert words("पिछले हफ्ते राहुल दिल्ली गया था।") == ["पिछले", "हफ्ते", "राहुल", "दिल्ली", "गया", "था"]
    question = set(keyword_terms("करीम की बिल्ली का नाम क्या है?"))
    evidence = set(keyword_terms("करीम की बिल्ली का नाम मोची है और वह सफेद है।"))
    assert {stem for word in ("करीम", "बिल्ली", "नाम") for stem in keyword_terms(word)} <= question & evidence


@pytest.mark.parametrize("question, evidence, shared", [
    # Russian cases: "Москва" asked, "в Москве" told (unstemmed, the two forms were two terms)
    ("Где работает Анна в Москве?", "Анна переехала в Москву и работает в библиотеке", {"москв", "работа"}),
    # an Arabic article and a clitic preposition: "المكتبة" asked, "بالمكتبة" told
    ("أين تعمل المكتبة؟", "عملت بالمكتبة سنتين", {"مكتب"}),
    # Greek cases: Αθήνα asked, της Αθήνας told
    ("Πού είναι η Αθήνα;", "Το σπίτι της Αθήνας", {"αθην"}),
    # Korean particles: 서울 asked, 서울에서 told; read in syllable pairs, the two meet at 서울
    ("민수는 서울에 살아요?", "민수는 작년부터 서울에서 일해요", {"서울", "민수"}),
])
def test_an_inflected_word_asked_meets_the_form_the_memory_holds(question, evidence, shared):
    assert shared <= set(keyword_terms(question)) & set(keyword_terms(evidence))


def test_latin_letters_beyond_ascii_name_no_language_and_stay_as_written():
    assert keyword_terms("Müller wohnt in München") == ["müller", "wohnt", "münchen"]


def test_a_thai_run_is_read_in_bigrams_of_letters_with_their_marks():
    assert letter_bigrams("แมว") == ["แม", "มว"]
    assert letter_bigrams("ชื่อ") == ["ชื่อ"]  # ช with its vowel and tone mark is one letter, อ the other
    assert letter_bigrams("ก") == ["ก"]
    # The question's cat (แมว) and name (ชื่อ) are the evidence's, though neither text has a space inside.
    question = set(keyword_terms("แมวของสมชายชื่ออะไร"))
    evidence = set(keyword_terms("มาลี ฟังนะ ผมเริ่มเลี้ยงแมวแล้ว ชื่อโมจิ"))
    assert {"แม", "มว", "ชื่อ"} <= question & evidence
    # No term is a mark cut from its letter (\w+ gave มาล, จะไปเร ...).
    assert all(unicodedata.category(term[0]) not in ("Mn", "Mc")
               for term in keyword_terms("มาลีจะไปเรียนภาษาสเปนที่เมืองอะไร"))
    # The evaluation's words keep a run whole: a phrase between spaces.
    assert words("มาลี ฟังนะ") == ["มาลี", "ฟังนะ"]


def test_a_katakana_word_is_one_term_and_a_particle_none():
    terms = keyword_terms("昨日、田中さんは新宿のスターバックスでコーヒーを飲みました。")
    assert "スターバックス" in terms and "コーヒー" in terms  # jieba cut them into ス / タ / ー ...
    assert not {"の", "は", "で", "を", "ス"} & set(terms)
    assert {"昨日", "田中", "新宿"} <= set(terms)
    # A question in kana meets the statement in kana: no longer one term per whole kana run.
    assert "ねこ" in keyword_terms("ハルトのねこのなまえは？")
    assert {"ハルト", "ねこ"} <= set(keyword_terms("ハルトのねこはしろい。"))


def test_turkish_dotted_capital_i_is_an_i():
    assert keyword_terms("İzmir") == keyword_terms("Izmir") == ["izmir"]
    assert terms_in(["A native of İzmir."], frozenset({"izmir"})) == [frozenset({"izmir"})]


def test_a_mark_never_starts_a_word_and_an_emoji_selector_is_none():
    assert keyword_terms("1\ufe0f\u20e3 step, then ❤️ it") == ["1", "step"]
    assert words("\u0301abc") == ["abc"]


TEXTS = ["แมวของสมชายชื่อโมจิ เป็นแมวสีขาว iPhoneของฉัน",
         "ハルトの猫の名前はモチで、白いスコティッシュフォールドです。iPhoneを買った。",
         "करीम की बिल्ली का नाम मोची है।",
         "四川大学华西医院是一所综合性医院，位于成都。"]
QUESTIONS = ["แมวของสมชายชื่ออะไร", "ハルトの猫の名前は？", "करीम की बिल्ली का नाम क्या है?", "iPhone 的 医院"]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("question", QUESTIONS)
def test_terms_in_reads_these_scripts_as_keyword_terms_does(text, question):
    terms = frozenset(keyword_terms(question))
    assert terms_in([text], terms) == [terms & frozenset(keyword_terms(text))]


def test_english_and_chinese_terms_and_sentences_are_as_before():
    assert keyword_terms("Caroline went researching adoption agencies; she studies counseling.") == [
        "carolin", "went", "research", "adopt", "agenc", "studi", "counsel"]
    assert keyword_terms("我昨天用ChatGPT写了一个Python script，效果还不错。") == [
        "我", "昨天", "用", "chatgpt", "写", "一个", "python", "script", "效果", "还", "不错"]
    assert split_sentences("It rained. We stayed in! Why? 然后呢。好的！") == [
        "It rained.", "We stayed in!", "Why?", "然后呢。", "好的！"]


ARABIC = ("كان الطقس ممطراً في نهاية الأسبوع فبقيت في البيت؟ نعم، شاهدت فيلماً طويلاً۔ اسم قطة كريم موتشي وهي "
          "بيضاء۔ يوم الثلاثاء عملت حتى وقت متأخر؟ يوم الأربعاء ذهبت مع صديقاتي إلى المقهى۔ يوم الخميس لم أفعل شيئاً")
HINDI = ("सप्ताहांत में बारिश हो रही थी इसलिए मैं घर पर रहा। मैंने एक लंबी फिल्म देखी। करीम की बिल्ली का नाम मोची "
         "है और वह सफेद है। मंगलवार को मैंने देर तक काम किया। बुधवार को मैं दोस्तों के साथ कैफे गया। गुरुवार को "
         "मैंने कुछ नहीं किया।")


@pytest.mark.parametrize("text, question, best", [
    (ARABIC, "ما اسم قطة كريم؟", "اسم قطة كريم موتشي وهي بيضاء۔"),
    (HINDI, "करीम की बिल्ली का नाम क्या है?", "करीम की बिल्ली का नाम मोची है और वह सफेद है।"),
])
def test_an_arabic_or_hindi_passage_is_compressed_to_its_best_sentence_whole(text, question, best):
    # ؟ ۔ । ended no sentence: the passage was one unit, too long for the room, and dropped whole.
    assert len(sentence_units(text)) == 6
    room = COUNTER.count(f"… {best} …")
    assert compress(text, question, room, COUNTER) == f"… {best} …"
    assert compress(text, question, room - 1, COUNTER) == ""  # the best sentence whole, or nothing


@pytest.mark.parametrize("message, question", [("اسم قطة كريم موتشي وهي بيضاء۔", "ما اسم قطة كريم؟"),
                                               ("करीम की बिल्ली का नाम मोची है।", "बिल्ली का नाम क्या है?")])
def test_a_message_of_one_arabic_or_hindi_sentence_is_never_emptied(message, question):
    assert compress(message, question, 3, COUNTER) == message


def test_the_other_sentence_ends_split_sentences_and_an_arabic_semicolon_runs_on():
    assert split_sentences("नमस्ते। आप कैसे हैं? ठीक हूँ॥ धन्यवाद") == ["नमस्ते।", "आप कैसे हैं?", "ठीक हूँ॥", "धन्यवाद"]
    assert split_sentences("هل أنت بخير؟ نعم۔ شكراً") == ["هل أنت بخير؟", "نعم۔", "شكراً"]
    units = sentence_units("ذهبت إلى السوق؛ اشتريت خبزاً۔ ثم عدت")
    assert units == ["ذهبت إلى السوق؛ اشتريت خبزاً۔", "ثم عدت"]
    # the clause before ؛ stays with the one after it that the question asks about
    assert compress("ذهبت إلى السوق؛ اشتريت خبزاً۔ ثم عدت", "ماذا اشتريت؟", 100, COUNTER) == f"{units[0]}{GAP}".rstrip()


def test_the_splitter_cuts_a_long_hindi_text_after_a_danda():
    text = " ".join(f"वाक्य संख्या {n} में कुछ शब्द हैं और यह यहाँ समाप्त होता है।" for n in range(40))
    chunks = Splitter(COUNTER, chunk_tokens=120, overlap_tokens=0).split(text)
    assert len(chunks) > 1
    assert all(chunk.text.endswith("।") for chunk in chunks)
    assert all(text[chunk.start:chunk.end] == chunk.text for chunk in chunks)


THAI = "ไม่แล้ว ปีที่แล้วช่วงปลายฝนน้องสาวย้ายไปเชียงใหม่ ทำงานเป็นพยาบาลที่โรงพยาบาลสวนดอก ข้าวซอยที่นั่นอร่อยที่สุด"


def test_a_thai_passage_is_compressed_at_its_spaces_and_joined_again_by_one():
    # Thai marks no sentence end: a space between two Thai letters parts sentences (words run together). Before,
    # the passage was one unit, placed whole or dropped.
    assert split_sentences(THAI) == ["ไม่แล้ว", "ปีที่แล้วช่วงปลายฝนน้องสาวย้ายไปเชียงใหม่",
                                     "ทำงานเป็นพยาบาลที่โรงพยาบาลสวนดอก", "ข้าวซอยที่นั่นอร่อยที่สุด"]
    best = "ทำงานเป็นพยาบาลที่โรงพยาบาลสวนดอก"
    room = COUNTER.count(f"… {best} …")
    assert compress(THAI, "น้องสาวทำงานเป็นพยาบาลที่ไหน", room, COUNTER) == f"… {best} …"
    # adjacent sentences kept together read as written, a space between them, not a line break
    both = compress(THAI, "น้องสาวย้ายไปเชียงใหม่ ทำงานเป็นพยาบาลที่ไหน", COUNTER.count(THAI) - 1, COUNTER)
    assert "เชียงใหม่ ทำงานเป็น" in both and "\n" not in both
    # a space before a Latin word or a number, or a line break, is not a Thai sentence end
    assert split_sentences("ผมซื้อไอโฟน 15 มา") == ["ผมซื้อไอโฟน 15 มา"]
    assert split_sentences("ผมซื้อกล้อง Sony A7") == ["ผมซื้อกล้อง Sony A7"]
