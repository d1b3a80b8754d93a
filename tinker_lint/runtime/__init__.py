"""What tinker-lint puts in a training process: the recorder (`record`), which times Tinker
requests and waits into its own file. Only the standard library and `tinker` are imported here."""
