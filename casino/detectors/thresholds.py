"""The false-alarm rates of the statistical detectors, posted in the règlement's articles
(``casino.floor.articles``) and in docs/detectors.md.

Each is a family-wise rate: the chance, under honest play, that one run of the detector raises
anything at all over everything it tests in that run (Bonferroni over its tests). At 0.001 a
room of 20 tables, running each detector once per séance and once per day, expects about one
false alarm of each family every few years of séances: few enough that each alarm is read.
"""

ALPHA = 0.001
