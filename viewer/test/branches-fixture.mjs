// A hand-made `branch_flow` record (the shape analysis/branches/flow_record.cpp writes) and its
// source snippet, shared by the hot-path tests (node and browser). A loop at lines 10-14: block 1
// (line 11) branches to block 3 (line 13) 3 times in 4, else falls through to block 2 (line 12);
// block 4 (line 14) jumps back to block 1.
export const loop = {
  type: 'branch_flow', object: '/tmp/prog', function: 'classify', location: '/src/prog.c:10', taken: 700,
  blocks: [[0x1000, 0x1008, 1, '/src/prog.c:10'], [0x1010, 0x1014, 400, '/src/prog.c:11'], [0x1016, 0x101a, 100, '/src/prog.c:12'],
    [0x101c, 0x1020, 300, '/src/prog.c:13'], [0x1022, 0x1026, 400, '/src/prog.c:14']],
  edges: [[4, 1, 399, 'taken'], [1, 3, 300, 'taken'], [2, 4, 100, 'taken'], [3, 4, 300, 'fall-through'],
    [1, 2, 100, 'fall-through'], [0, 1, 1, 'fall-through'], [4, -1, 1, 'leaves'], [9, 1, 5, 'taken']],
  paths: [[290, 1, 3, 4], [95, 1, 2, 4]],
};
export const other = { ...loop, function: 'helper', taken: 10, paths: [] };
export const source = { type: 'source', file: '/src/prog.c', first_line: 9,
  lines: ['long classify(long n) {', '  for (long i = n; i > 0; --i) {', '    if (i & 3)', '      x += 3;',
    '    else x ^= i;', '  }', '}'] };
