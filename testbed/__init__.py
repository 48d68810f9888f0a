"""What the tests and the benchmarks share: driving the app in a real browser, a signing-in proxy, the
simulated annotator, the reliability campaign's parts, the class-size bands, the Czech topic benchmark's
data and the ceiling model. ``bench/`` holds the command-line entry points that print and record
figures; ``tests/`` check these same functions. Neither depends on the other."""
