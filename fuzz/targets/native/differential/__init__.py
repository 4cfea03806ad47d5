"""The differential oracle of the native target: the same inputs walked by several unwinders,
each in worker processes of its own, and their walks judged against the known chain and
against each other (`judge`); the run (`run`, `worker`, `rows`), its report (`report`), its
replay (`replay`), its stress run (`stress`) and the CLI's entry points (`cli`)."""
