// A hand-made `stalls` record (the shape analysis/stalls/stalls_report.cpp writes) and its source
// snippet, shared by the stall tests (node and browser).
export const chase = {
  type: 'stalls', procedure: 'chase', object: '/tmp/micro', build_id: 'ab', samples: 900, cpu: 'znver3',
  summary: {
    best_case_cpi: 1.12, actual_cpi: 76.2, total_cycles: 900, dynamic_stall: 880, static_stall: 9, execution: 11,
    unexplained_gain: 0, frequencies_from: 'samples',
    causes: { 'D-cache': [800, 890, 'dynamic'], DTLB: [0, 90, 'dynamic'], 'load latency (L1 hit)': [8, 8, 'static'] },
    confidence_shares: { high: 0, medium: 0, low: 1 },
  },
  instructions: [
    { address: 0x1520, text: 'add rdx, 0x01', samples: 0, charged: 0, frequency: 11, executions: 2.7e7, confidence: 'low',
      cpi: 0, best_case: 0.25, static_stall: 0, static_cause: '', dynamic_stall: 0, culprits: [], source: '/src/micro.c:18', block_head: true },
    { address: 0x1524, text: 'mov rax, [rax]', samples: 0, charged: 900, frequency: 11, executions: 2.7e7, confidence: 'low',
      cpi: 81.8, best_case: 3, static_stall: 2.75, static_cause: 'load latency (L1 hit)', dynamic_stall: 78.8,
      culprits: [{ cause: 'D-cache', letter: 'd', instruction: 0x1524, low: 48.8, high: 78.8 },
        { cause: 'DTLB', letter: 't', instruction: 0x1524, low: 0, high: 30 }],
      source: '/src/micro.c:18', block_head: false },
    { address: 0x1527, text: 'cmp rsi, rdx', samples: 900, charged: 0, frequency: 11, executions: 2.7e7, confidence: 'low',
      cpi: 0, best_case: 0.25, static_stall: 0, static_cause: '', dynamic_stall: 0, culprits: [], source: '/src/micro.c:18', block_head: false },
  ],
};
export const helper = { ...chase, procedure: 'helper', samples: 100, instructions: [] };
export const source = { type: 'source', file: '/src/micro.c', first_line: 17, lines: ['{', '  for (long i = 0; i < n; ++i) p = p->next;'] };
