package sqlstore

// WALBoundPagesForTest is the WAL's size in pages past which the writer
// checkpoints it itself.
const WALBoundPagesForTest = walBoundPages
