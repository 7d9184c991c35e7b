// The shared test support (child processes, the PostgreSQL test cluster, a seeded random
// generator) is visible in every file of this target, as it was when each target declared
// its own copy: a new test file needs no extra import.
@_exported import CofferTestSupport
