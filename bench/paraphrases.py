"""A small paraphrase set for the record-mode embedders (bench/embedder_bench.py).

Each pair is a question a user might ask a memory engine and the one fact, written earlier, that
answers it. The two share few or no content words on purpose ("family" / "sister"), so a hit
means retrieval by meaning, not by spelling. The facts together are the corpus every question is
ranked against: recall@k counts the questions whose own fact is among the k nearest.
"""

from __future__ import annotations

PAIRS: list[tuple[str, str]] = [
    ("Tell me about my family.", "My sister Ana lives in Lisbon."),
    ("What car do I drive?", "I bought a Tesla Model 3 last spring."),
    ("Do I have any pets?", "Our dog Biscuit loves the beach."),
    ("What food can't I eat?", "I am allergic to peanuts."),
    ("Where do I work?", "I'm a nurse at the city hospital."),
    ("What instrument do I play?", "I have practised the violin since childhood."),
    ("Where did I go on holiday?", "Last summer we travelled to Japan."),
    ("What is my favourite sport?", "I never miss a football match on Sunday."),
    ("How do I get to the office?", "I commute by bike every morning."),
    ("What am I studying?", "I'm taking evening classes in chemistry."),
    ("When is my birthday?", "I was born on the 3rd of March."),
    ("Which language am I learning?", "I practise Spanish with an app every day."),
    ("Who is my partner?", "My wife Maria is an architect."),
    ("What do I have for breakfast?", "I always start the day with porridge and espresso."),
    ("Where is my home?", "My apartment is in downtown Berlin."),
    ("What music do I like?", "Jazz records fill my shelves."),
    ("Am I vegetarian?", "I stopped eating meat five years ago."),
    ("Do I have any illness?", "I was diagnosed with diabetes in 2019."),
    ("What books do I enjoy?", "I love mystery novels by Agatha Christie."),
    ("How many kids do I have?", "We have two daughters and a son."),
    ("What phone do I use?", "My iPhone screen cracked yesterday."),
    ("Where did I grow up?", "I spent my childhood on a farm in Ohio."),
    ("What is my profession?", "I was promoted to senior software engineer."),
    ("What do I do on weekends?", "Saturdays are for hiking in the mountains."),
    ("Do I smoke?", "I quit cigarettes last year."),
    ("What is my favourite colour?", "Everything I own is painted blue."),
    ("Which team do I support?", "I'm a lifelong Liverpool fan."),
    ("What do I cook for dinner?", "Pasta with tomato sauce is my evening meal most nights."),
    ("How do I relax?", "Yoga and meditation calm me down after work."),
    ("How much can I spend on the trip?", "My travel budget is two thousand euros."),
    ("Who is my doctor?", "Dr. Patel is my physician."),
    ("When do I wake up?", "My alarm rings at six every day."),
    ("What games do I play?", "I spend evenings on chess puzzles."),
    ("What is my religion?", "We go to church every Sunday."),
    ("What did I study at university?", "I hold a degree in economics."),
    ("How tall am I?", "My height is six feet."),
    ("Where do my parents live?", "Mom and dad have a house near a lake in Minnesota."),
    ("What is my favourite film?", "I have watched The Godfather a dozen times."),
    ("Do I have a garden?", "Tomatoes and roses grow in my backyard."),
    ("What is my salary?", "I earn ninety thousand dollars a year."),
]
