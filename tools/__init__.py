"""Colony's catalog tools, one package each; the catalog names them by FQN."""
