// The program the missing-symbol test preloads the runtime into: it does nothing, because the
// runtime must stop it during start-up (a required original symbol cannot be resolved).
int main() { return 0; }
