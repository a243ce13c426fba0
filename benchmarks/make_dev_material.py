"""Generate development material of kinds the four development files do not cover (issue 12).

Nothing here is copied into the repository: the files are generated, deterministically from a seed, out of
the development files in ``../shared/eval`` (names, titles and paragraphs), into ``--out``.

Kinds (each file in a format ``agent-memory eval`` reads):

- ``chains.jsonl`` (HotpotQA shape): questions that need 3 or 4 encyclopedia paragraphs. Entity pages of
  people, companies and cities (names recombined from the HotpotQA titles, cities with their real regions
  taken from the HotpotQA paragraphs) state templated relations: a person works for a company and is
  married to another person, a company was founded by a person and is headquartered in a city, a city lies
  in a region. A question names only the first entity ("In which region is the head office of the company
  that employs X's spouse?"); every page on the path is evidence. Distractors: the other facts on the same
  pages, colleagues' pages, other companies of the same city, and real HotpotQA paragraphs.
- ``zh_pool.json`` (LoCoMo shape with ``documents``): one tenant holding thousands of short Chinese
  statements about people ("<人>的<事件>的地点是<城市>", "<人>的生日是<日期>", ...; names and places
  from CMRC), most as notes (documents), some said in daily-life chat; pooled with long off-topic turns
  (an assistant reciting CMRC articles), chat turns that mention the same people and places, English
  LoCoMo turns and HotpotQA paragraphs. A question asks for one statement (its evidence), half in the
  template's words, half paraphrased.
- ``en_pool.json``: the same in English (names from HotpotQA, CMRC articles as the foreign documents).
- ``zh_events.json``: the Chinese pool with statements about nameless events (group, time, activity).
- ``zh_users.json`` (LoCoMo shape, one record per user): several users, each its own tenant holding ONE
  user's daily memory: the pool's statements about a few people (events, birthdays, pets, food ...) all
  said in chat turns, chat about the same people and places around them, a few off-topic lectures, no
  documents; a few hundred messages and ~30 questions per user, half in the template's words.
- ``zh_users_mixed.json``: the same with fewer people and 20 nameless events per user beside them.
- ``zh_group.json`` (LoCoMo shape, one record per group): friends chatting in Chinese, each stating their own
  sport, food, cat, hometown, workplace, birthday and last trip in the first person ("我最喜欢的运动是游泳。"),
  among chatter that names the others; a question names the friend ("王芳最喜欢的运动是什么？"), half
  paraphrased, so only the speaker of a turn tells whose fact it is (LoCoMo's setting, in Chinese).
- ``en_group.json``: the same in English, four friends by first name ("My favourite sport is rowing.").
- ``zh_dated.json`` (LoCoMo shape, one record per user, questions dated as LongMemEval's are): a year of one
  user's Chinese chat in which the same activities recur (eight activities, 40 outings, each told on its day
  or the day after), so only the time a question names ("我上个月是和谁爬山的？", "我去年秋天是在哪个城市看电影的？")
  tells one outing from another; asked the day after the last session, only where one outing fits.
- ``zh_dated_late.json``: the same, each outing told days or weeks after it happened by its own time
  ("上个月和…", "上周和…", "三天前和…"), so the day a turn was said need not be in the months a question names.
- ``zh_users_events.json``: the harder per-user variant (issue 34: the plain and mixed sets sit at the
  ceiling for dense too): 3 people and 60 nameless events per user, told apart only by group, time and
  activity, and 150 chat pairs about them; about 500 messages and 30 questions per user.
- ``zh_users_events_unseen.json``: the same with other time words (``pools.UNSEEN_TIMES``), spelled in
  pairs none of the other kinds use, so that what was tuned on the events' time paraphrases is checked on
  time words it was not tuned on.
- ``zh_users_events_weekdays.json``: the same with weekdays spelled two ways (``pools.WEEKDAY_TIMES``: 上周五 /
  上个星期五), the keyword terms' weekday rule end to end (written with the rule: not a held-out check).
- ``en_users_events.json``: the English counterpart of ``zh_users_events`` (``dev_material/users_en.py``): 3
  people and 60 nameless events per user ("The venue of the dinner with the family last spring is Dover."),
  told apart only by group, English time words (``users_en.EN_TIMES``: "last Friday" / "on Friday last week",
  "next March", "the week before last") and activity, and 150 chat pairs about them; names, places and
  workplaces from HotpotQA as ``en_pool``'s, HotpotQA paragraphs as the off-topic lectures; about 500
  messages and 30 questions per user, half in the template's words, half paraphrased. English per-user memory
  nobody tuned on. Its questions carry no date and its sessions are dated one a day whatever their time words
  say, so relative time words count from the day of the run: kept as it was for the figures measured on it.
- ``en_users_events_dated.json``: the same material with every relative time word agreeing with the sessions'
  dates as of the questions' date (``qa.question_date``, 25 April 2024): each pair of turns said on a day
  where its time word names what the question's does ("last Friday" only in the week asked, "last month" only
  in April), the sessions cut from the pairs in the order of their days (``dated_sessions.date_sessions``).
- ``zh_users_events_dated.json``: ``zh_users_events`` dated the same way (``dated_sessions.ZH_TIMES_DATED``: 上个月
  only in April; questions asked on 25 April 2024), so a turn's time word names what the question's does.
- ``en_users.json``: the plain per-user set (``zh_users``' shape) in English.
- ``en_users_updates.json`` / ``zh_users_updates.json`` (``dev_material/updates.py``): one user's months of chat
  in which their own circumstances change and change again (home, job, car, diet, sport, phone, manager,
  instrument), each change told once in the first person among other people's changes in the same words;
  questions ask what holds now (evidence: the latest change) or what held before it, asked the day after the
  last session. A kind nothing was tuned on: the older values are told in the same words as the latest.
- ``en_users_aggregates.json`` / ``zh_users_aggregates.json`` (``dev_material/aggregates.py``): one user's months
  of chat in which they tell, weeks apart, of three or four things of one kind they did (dishes cooked, sports
  tried, books read, concerts, courses), worded without the kind's name, among other people's doings in the same
  words; a question asks for all of them ("Which books have I read?", "How many concerts have I been to?"), every
  such statement is evidence. A kind nothing was tuned on: LoCoMo's aggregation in one user's memory.
- ``en_users_recalls.json`` / ``zh_users_recalls.json`` (``dev_material/recalls.py``): one user's months of chat in
  which they ask the assistant for something concrete in a named situation (a restaurant for their anniversary in
  Lisbon, a stretch for their back after long drives, a name for their kitten) and the assistant answers with one
  recommendation and its reason, among its recommendations of the same type for other situations, other people's
  recommendations told by the user and chatter; a question names the situation ("Which restaurant did you suggest
  for our anniversary in Lisbon?"), half paraphrased, and its evidence is the assistant's turn alone. A kind
  nothing was tuned on: what the assistant said, not the user.
- ``en_users_preferences.json`` / ``zh_users_preferences.json`` (``dev_material/preferences.py``): one user's months
  of chat in which they tell once, in passing, of a standing preference or constraint of their own (they went
  vegetarian, a knee injury, night shifts, no more planes), among other people's preferences of the same domain told
  by the user and chatter; months later a question asks for a recommendation that preference decides without naming
  it ("Can you suggest a recipe for dinner tonight?"), half paraphrased, its evidence the user's statement alone and
  its answer the preference. A kind nothing was tuned on: LongMemEval's single-session-preference, where the
  question shares no content word with its evidence. ``*_users_preferences_changed``: each preference told twice,
  months apart, with another value the second time; the evidence and the answer are the later statement.

    python benchmarks/make_dev_material.py --out reports/devmat
    agent-memory --data-dir /tmp/dm/chains eval reports/devmat/chains.jsonl --budget 500,1000 --out reports/devmat
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.dev_material.aggregates import make_aggregates  # noqa: E402
from benchmarks.dev_material.chains import make_chains  # noqa: E402
from benchmarks.dev_material.dated import make_dated  # noqa: E402
from benchmarks.dev_material.dated_sessions import make_zh_users_dated  # noqa: E402
from benchmarks.dev_material.group_chat import make_group_chats  # noqa: E402
from benchmarks.dev_material.pools import UNSEEN_TIMES, WEEKDAY_TIMES, make_pool, make_users  # noqa: E402
from benchmarks.dev_material.preferences import make_preferences  # noqa: E402
from benchmarks.dev_material.recalls import make_recalls  # noqa: E402
from benchmarks.dev_material.sources import Sources  # noqa: E402
from benchmarks.dev_material.updates import make_updates  # noqa: E402
from benchmarks.dev_material.users_en import make_en_users  # noqa: E402

DEFAULT_SOURCE = Path(__file__).resolve().parents[1].parent / "shared" / "eval"


def generate(source: Path, out: Path, seed: int, kinds: list[str]) -> dict[str, Path]:
    src = Sources.read(source)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    if "chains" in kinds:
        path = out / "chains.jsonl"
        records = make_chains(src, random.Random(seed))
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        written["chains"] = path
    for lang in ("zh", "en"):
        if lang in kinds:
            path = out / f"{lang}_pool.json"
            path.write_text(json.dumps(make_pool(src, random.Random(seed), lang), ensure_ascii=False),
                            encoding="utf-8")
            written[lang] = path
    if "zh_events" in kinds:
        path = out / "zh_events.json"
        pool = make_pool(src, random.Random(seed), "zh", events=520, questions=180, chats=150, lectures=80,
                         locomo_sessions=3)
        pool[0]["sample_id"] = "zh-events"
        path.write_text(json.dumps(pool, ensure_ascii=False), encoding="utf-8")
        written["zh_events"] = path
    if "zh_users" in kinds:
        path = out / "zh_users.json"
        path.write_text(json.dumps(make_users(src, random.Random(seed)), ensure_ascii=False), encoding="utf-8")
        written["zh_users"] = path
    for lang in ("zh", "en"):
        if f"{lang}_group" in kinds:
            path = out / f"{lang}_group.json"
            path.write_text(json.dumps(make_group_chats(src, random.Random(seed), lang=lang), ensure_ascii=False),
                            encoding="utf-8")
            written[f"{lang}_group"] = path
    if "zh_dated" in kinds:
        path = out / "zh_dated.json"
        path.write_text(json.dumps(make_dated(src, random.Random(seed)), ensure_ascii=False), encoding="utf-8")
        written["zh_dated"] = path
    if "zh_dated_late" in kinds:
        path = out / "zh_dated_late.json"
        path.write_text(json.dumps(make_dated(src, random.Random(seed), late=True), ensure_ascii=False),
                        encoding="utf-8")
        written["zh_dated_late"] = path
    # One user's months of chat per language, each kind its own maker (the same seed for each).
    per_language = {"users_updates": make_updates, "users_aggregates": make_aggregates, "users_recalls": make_recalls,
                    "users_preferences": make_preferences,
                    "users_preferences_changed": functools.partial(make_preferences, changed=True)}
    for lang in ("zh", "en"):
        for suffix, make in per_language.items():
            if (kind := f"{lang}_{suffix}") in kinds:
                path = out / f"{kind}.json"
                path.write_text(json.dumps(make(src, random.Random(seed), lang), ensure_ascii=False), encoding="utf-8")
                written[kind] = path
    for kind, (tenant, shape) in _USER_VARIANTS.items():
        if kind in kinds:
            path = out / f"{kind}.json"
            make, lang = (make_en_users, "en") if kind.startswith("en_") else (make_users, "zh")
            if kind == "zh_users_events_dated":
                make = make_zh_users_dated
            records = make(src, random.Random(seed), **shape)
            for record in records:
                record["sample_id"] = record["sample_id"].replace(f"{lang}-user", tenant)
            path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
            written[kind] = path
    return written


# The per-user variants beside the plain zh_users: (their tenants' prefix, make_users arguments).
_USER_VARIANTS = {
    "zh_users_mixed": ("zh-mixed", {"people": 5, "events": 20}),
    "zh_users_events": ("zh-events-user", {"people": 3, "events": 60, "chats": 150}),
    "zh_users_events_unseen": ("zh-events-unseen", {"people": 3, "events": 60, "chats": 150, "times": UNSEEN_TIMES}),
    "zh_users_events_weekdays": ("zh-events-weekdays", {"people": 3, "events": 60, "chats": 150,
                                                        "times": WEEKDAY_TIMES}),
    "en_users": ("en-user", {}),
    "en_users_events": ("en-events-user", {"people": 3, "events": 60, "chats": 150}),
    "en_users_events_dated": ("en-events-dated", {"people": 3, "events": 60, "chats": 150, "dated": True}),
    "zh_users_events_dated": ("zh-events-dated", {"people": 3, "events": 60, "chats": 150}),
}


def breakdown(dataset: Path, questions: Path) -> dict[str, dict[str, float]]:
    """Soft recall per system and kind of question from an eval run's per-question JSON lines: a pool's
    ``qa.kind`` (note/said × template/paraphrase); for chains, each page's presence by its place on the path
    ("3-hop:hop2") and whether the answer is in the prompt."""
    kind_of: dict[str, str] = {}
    paths: dict[str, list[str]] = {}
    if dataset.suffix == ".json":
        for rec in json.loads(dataset.read_text("utf-8")):
            for index, qa in enumerate(rec["qa"]):
                kind_of[f"{rec['sample_id']}:q{index}"] = qa.get("kind", "all")
    else:
        for line in dataset.read_text("utf-8").splitlines():
            rec = json.loads(line)
            kind_of[rec["question_id"]] = rec.get("type", "all")
            paths[rec["question_id"]] = rec.get("path", [])
    sums: dict[str, dict[str, list[float]]] = {}
    for line in questions.read_text("utf-8").splitlines():
        row = json.loads(line)
        kind = kind_of.get(row["qid"], row.get("category", "all"))
        into = sums.setdefault(row["system"], {})
        for key in (kind, "all"):
            into.setdefault(key, []).append(row["soft"])
        present = dict(zip(row["evidence"], row["present"]))
        for hop, title in enumerate(paths.get(row["qid"], []), 1):
            into.setdefault(f"{kind}:hop{hop}", []).append(float(present.get(title, False)))
        if "answer_in_prompt" in row:
            into.setdefault("answer in prompt", []).append(float(row["answer_in_prompt"]))
    return {system: {k: round(sum(v) / len(v), 3) for k, v in sorted(kinds.items())}
            for system, kinds in sums.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="the development files' folder")
    parser.add_argument("--out", type=Path, default=Path("reports/devmat"))
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--kinds", default="chains,zh,en,zh_events",
                        help="comma list of chains, zh, en, zh_events, zh_users, zh_users_mixed, zh_users_events, "
                             "zh_users_events_unseen, zh_users_events_weekdays, zh_users_events_dated, en_users, en_users_events, "
                             "en_users_events_dated, zh_group, en_group, zh_dated, zh_dated_late, and per language (en_, zh_) users_updates, "
                             "users_aggregates, users_recalls, users_preferences, users_preferences_changed")
    parser.add_argument("--breakdown", nargs=2, type=Path, metavar=("DATASET", "QUESTIONS_JSONL"),
                        help="print soft recall per system and kind of question for an eval run, and exit")
    args = parser.parse_args(argv)
    if args.breakdown:
        for system, kinds in breakdown(*args.breakdown).items():
            print(system, json.dumps(kinds))
        return 0
    written = generate(args.source, args.out, args.seed, [k.strip() for k in args.kinds.split(",") if k.strip()])
    for kind, path in written.items():
        print(f"{kind}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
