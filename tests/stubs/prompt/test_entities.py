"""stubs.prompt.entities: the names a message says, without its sentence-opening capitals."""

from __future__ import annotations

from stubs.prompt.entities import entity_names

SESSION = """user: I'm planning a trip to Japan and want to see the temples in Kyoto. Any tips?
assistant: Sure! Kinkaku-ji and Fushimi Inari Shrine are worth a morning each. Enjoy the visit.
user: Great, my friend Priya's cousin lives near Gion. I'll stay there.
assistant: That's a perfect base. Rates change often, so book early."""


def test_names_in_the_order_said_and_no_sentence_openers() -> None:
    assert entity_names(SESSION) == [
        "Japan",
        "Kyoto",
        "Kinkaku-ji",  # opens its sentence, but no English word: a name
        "Fushimi Inari Shrine",  # several capitalised words: a name wherever it stands
        "Priya",  # the possessive's owner
        "Gion",
    ]


def test_a_name_first_said_at_a_sentences_start_counts_once_said_inside_one() -> None:
    # "Tom" is an English word too (a tomcat): alone at a sentence's start it is doubtful.
    assert entity_names("Tom called. He is fine.") == []
    assert entity_names("Tom called. I told Tom to wait.") == ["Tom"]
    # graphiti keeps "Ana" from the episode that introduced her ("My sister Ana ...").
    assert entity_names("Ana adopted a cat named Miso.") == ["Miso"]


def test_random_words_capitalised_by_their_sentence_are_no_names() -> None:
    text = "Time garden recipe travel. Even the laptop idea. Yoga time even."
    assert entity_names(text) == []


def test_pronouns_and_their_contractions_are_never_names() -> None:
    assert entity_names("I'll go. That's it. We're done. I think so, I do.") == []
