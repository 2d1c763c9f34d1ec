"""The one fused scan kernel behind every estimator.

Each program owns BLOCK_N rows and walks their time axis in chunks of BLOCK_T, starting at the
boundary side (t = T-1 for backward scans, t = 0 for forward ones). For every chunk it

1. loads the raw inputs (``_raw``; a program walking several chunks issues the next chunk's
   loads before it scans this one) and builds the coefficients ``(a, b)`` in registers,
2. runs ``tl.associative_scan`` with the single combine ``_combine`` (ALGORITHMS.md §2.1),
3. applies the carry entering the chunk, ``x = B + A * carry``, writes the outputs, and
4. takes the value at the chunk's far end as the next carry (the single-pass form of §2.5).

Scan order: a chunk is loaded in ascending time (contiguous, vectorised loads) and scanned
toward the boundary: ``associative_scan(reverse=True)`` for backward scans, whose running
suffix is the left operand on triton 3.6 (H200) and in the interpreter, so the element applied
first, nearest the boundary value, is always the left operand of ``_combine``
(tests/test_estimators.py pins this against the float64 reference on every backend). Configs
with ``TWO_LEVEL`` scan a backward, time-last chunk in two levels instead
(``_suffix_two_level``: 4 steps a thread in registers, then shuffles within the row's warp),
because triton's reverse scan moves every element across lanes twice. Time-major backward scans
(``DESCEND``) load a chunk in descending time instead and scan it forward: their vectors run
along the rows, so the order costs the loads nothing and the scan no lane reversals.

Lanes outside ``[0, T)`` or past the last row hold the identity ``(1, 0)`` (§2.4) and every
load and store is masked, so pad lanes may carry out-of-range times. Masking is by
selection (``tl.where``), never by multiplying with a 0/1 flag, so NaN or inf in ignored slots
(successor values after a termination, bootstrap values at non-boot steps, padding) never
reach an output (§1.5). Offsets are 64-bit, so tensors past 2**31 elements are safe.
"""
import triton
import triton.language as tl

# Estimator codes (constexpr EST). Kept in sync with rlscan/_problem.py.
DISC, GAE, LAMBDA, VTRACE, RETRACE, TRACE, CUMSUM, LINEAR = 0, 1, 2, 3, 4, 5, 6, 7
# Successor-value sources (constexpr VNEXT), ALGORITHMS.md §1.3.
VN_NONE, VN_DENSE, VN_BOOT_STEPS, VN_BOOT_LAST, VN_BOOT_ZERO = 0, 1, 2, 3, 4
# Ratio sources (constexpr RATIO), ALGORITHMS.md §1.4.
RATIO_LOG, RATIO_LOGP_PAIR, RATIO_PROB_PAIR = 0, 1, 2


@triton.jit
def _apply(a, b, x):
    # b + a·x, where a = 0 is a reset that discards x even if x is inf or NaN (§2.1: an
    # element (0, b) discards everything composed inside it, so a done flag severs all
    # dependence across it)
    return tl.where(a == 0.0, b, b + a * x)


@triton.jit
def _compose_a(a_r, a_l):
    # a_r·a_l, where a_r = 0 stays a reset even if a_l is inf or NaN (0·NaN would be NaN)
    return tl.where(a_r == 0.0, 0.0, a_r * a_l)


@triton.jit
def _combine(a_l, b_l, a_r, b_r):
    # op(L, R) = R ∘ L: L is nearer the boundary value and is applied first.
    return _compose_a(a_r, a_l), _apply(a_r, b_r, b_l)


@triton.jit
def _combine_next(a_l, b_l, na_l, nb_l, a_r, b_r, na_r, nb_r):
    # _combine on (f, n): f composes a segment, n all of it but its element nearest the
    # boundary. A backward scan's lane t then holds in n the composition of steps t+1 .. chunk
    # end: x[t+1] without moving values between lanes (V-trace's vs[t+1]).
    # (L ∪ R) = (f_R ∘ f_L, n_R ∘ f_L), associative like _combine itself.
    f_a, f_b = _combine(a_l, b_l, a_r, b_r)
    n_a, n_b = _combine(a_l, b_l, na_r, nb_r)
    return f_a, f_b, n_a, n_b


@triton.jit
def _rows(v, TWO_LEVEL: tl.constexpr):
    # a per-row [BN] value broadcastable against the chunk tile ([BN, BT] or [G, BN, Q, E])
    if TWO_LEVEL:
        out = v[None, :, None, None]
    else:
        out = v[:, None]
    return out


@triton.jit
def _at(x, lane, TWO_LEVEL: tl.constexpr):
    # [BN]: x at the one lane of each row where ``lane`` holds (exact: the rest add zeros)
    if TWO_LEVEL:
        out = tl.sum(tl.sum(tl.sum(tl.where(lane, x, 0.0), 3), 2), 0)
    else:
        out = tl.sum(tl.where(lane, x, 0.0), 1)
    return out


@triton.jit
def _step(x, o_e, k):
    # [G, BN, Q]: step k of every group of a [G, BN, Q, E] tile (axis 3 lies in one thread)
    return tl.sum(tl.where(o_e == k, x, 0.0), 3)


@triton.jit
def _suffix_two_level(a, b, o_e, G: tl.constexpr, Q: tl.constexpr, E: tl.constexpr):
    """``associative_scan((a, b), 1, _combine, reverse=True)`` over a chunk held as a
    [G, BN, Q, E] tile: Q parts of G groups of E (4, 8 or 16) contiguous steps, a group's steps in
    one thread, a row's G groups on G lanes of one warp, the Q <= 8 parts in that thread's
    registers (so a warp covers up to 1024 steps of a row without talking to other warps).
    Groups of 8 give bf16 loads of 16 bytes a thread (H200, bf16 discounted returns 65536x128:
    21.8 us with 4x128/w2 vs 26.0 with groups of 4; fp32 loses: 33.2 vs 27.9). G comes first
    because triton 3.6 lays a load's equally non-contiguous dimensions onto lanes in index
    order: as [Q, BN, G, 4], a 2x128/w2 tile put its 2 rows on lanes and split the groups over
    both warps, and the gathers paid shared-memory round trips (PTX: 11 bar.sync a chunk; 48 ->
    40 registers for discounted returns, ptxas sm_90). BN comes before Q so that a tile's
    warps go to its rows: as [G, Q, BN, E], 2x1024/w2 split each row's parts over both warps
    (PTX of the kernel: 53 bar.sync; 8 now). Triton's reverse scan moves every element
    across lanes before and after a forward scan (PTX, 2x128/w2: 33 shuffles vs 17 for the
    forward scan); here each thread composes its E steps in registers, the later groups of a
    part are composed by shuffles toward lower lanes (Hillis-Steele as gathers), the later parts
    in registers, and one combine per step completes it.
    Returns the suffix (s_a, s_b) and, per group, the composition of every later step of the
    chunk (e_a, e_b, [G, BN, Q, 1]): what carries the value entering the chunk to the group's
    last step's successor."""
    c_a = _step(a, o_e, E - 1)
    c_b = _step(b, o_e, E - 1)
    s_a = a
    s_b = b
    for k in tl.static_range(E - 2, -1, -1):
        c_a, c_b = _combine(c_a, c_b, _step(a, o_e, k), _step(b, o_e, k))
        s_a = tl.where(o_e == k, c_a[:, :, :, None], s_a)
        s_b = tl.where(o_e == k, c_b[:, :, :, None], s_b)
    # (c_a, c_b): each group's composition; e = the composition of groups g+1 .. G-1
    o_g = tl.arange(0, G)[:, None, None]
    zi = tl.zeros(c_a.shape, tl.int32)
    ok = o_g + 1 < G
    nxt = tl.minimum(o_g + 1, G - 1) + zi
    e_a = tl.where(ok, tl.gather(c_a, nxt, 0), 1.0)
    e_b = tl.where(ok, tl.gather(c_b, nxt, 0), 0.0)
    for lg in tl.static_range(0, 5):
        if (1 << lg) < G - 1:
            ok = o_g + (1 << lg) < G
            src = tl.minimum(o_g + (1 << lg), G - 1) + zi
            # the gathered segment lies nearer the boundary: it is applied first
            n_a, n_b = _combine(tl.gather(e_a, src, 0), tl.gather(e_b, src, 0), e_a, e_b)
            e_a = tl.where(ok, n_a, e_a)
            e_b = tl.where(ok, n_b, e_b)
    if Q > 1:
        # each part's composition (lane 0's, on every lane), then the later parts', in registers
        p_a, p_b = _combine(e_a, e_b, c_a, c_b)
        p_a = tl.gather(p_a, zi, 0)
        p_b = tl.gather(p_b, zi, 0)
        o_q = tl.arange(0, Q)[None, None, :]
        l_a = tl.full(c_a.shape, 1.0, tl.float32)      # parts q+1 .. Q-1, for part q
        l_b = tl.zeros(c_a.shape, tl.float32)
        acc_a = tl.sum(tl.where(o_q == Q - 1, p_a, 0.0), 2)
        acc_b = tl.sum(tl.where(o_q == Q - 1, p_b, 0.0), 2)
        for q in tl.static_range(Q - 2, -1, -1):
            l_a = tl.where(o_q == q, acc_a[:, :, None], l_a)
            l_b = tl.where(o_q == q, acc_b[:, :, None], l_b)
            acc_a, acc_b = _combine(acc_a, acc_b, tl.sum(tl.where(o_q == q, p_a, 0.0), 2),
                                    tl.sum(tl.where(o_q == q, p_b, 0.0), 2))
        e_a, e_b = _combine(l_a, l_b, e_a, e_b)
    e_a = e_a[:, :, :, None]
    e_b = e_b[:, :, :, None]
    s_a, s_b = _combine(e_a, e_b, s_a, s_b)
    return s_a, s_b, e_a, e_b


@triton.jit
def _offsets(o_row, t, stride_t, CONTIG: tl.constexpr):
    # offsets of a [BN, BT] per-step load. CONTIG (time-major, row stride 1): runs of 4 adjacent
    # rows, said so, give a load of any dtype the fp32 tile's layout of 4 rows a thread. Else
    # triton vectorises 16 bytes: bool flags 16 rows a thread, bf16 8, and a layout conversion
    # every chunk (PTX, 256x4/w2: 88 shuffles and 28 barriers a chunk, none said so). H200, bf16
    # time-major, 256x4/w2 at 65536x128: discounted returns 87.2 -> 29.2 us, GAE 94.3 -> 40.4.
    off = o_row + t.to(tl.int64) * stride_t
    if CONTIG:
        off = tl.max_contiguous(off, [4, 1])
    return off


@triton.jit
def _multiple(stride, A: tl.constexpr):
    # ``stride``, a multiple of A, said so: (stride // A) * A is the same int, and Triton's
    # alignment analysis takes a product's divisibility from its constant factor. Time-last rows
    # of T = 3000 steps (8 | T, 16 does not): 16-byte loads instead of one value each (PTX,
    # 1x512/w4: fp32 6 ld.global.v4 + 9 scalar, against 33 scalar; bf16 4x256/w4/2l/g8 4 v4)
    return (stride // A) * A


@triton.jit
def _multiples(n, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, A: tl.constexpr):
    # ``_multiple`` of a length and its axis's 11 strides (9 per-step inputs, 2 outputs)
    return (_multiple(n, A), _multiple(s0, A), _multiple(s1, A), _multiple(s2, A),
            _multiple(s3, A), _multiple(s4, A), _multiple(s5, A), _multiple(s6, A),
            _multiple(s7, A), _multiple(s8, A), _multiple(s9, A), _multiple(s10, A))


@triton.jit
def _load(ptr, o_row, t, stride_t, m, other, CONTIG: tl.constexpr):
    # [BN, BT] float32 load of a per-step tensor at times t (any int dtype, any stride)
    return tl.load(ptr + _offsets(o_row, t, stride_t, CONTIG), mask=m,
                   other=other).to(tl.float32)


@triton.jit
def _load_flag(ptr, o_row, t, stride_t, m, CONTIG: tl.constexpr):
    # nonzero = true, for bool, integer and float flags alike
    return tl.load(ptr + _offsets(o_row, t, stride_t, CONTIG), mask=m, other=0) != 0


@triton.jit
def _clip(ratio, thr):
    # min(thr, ratio) that lets a NaN ratio through (min.f32 on the GPU would drop it)
    return tl.where(ratio > thr, thr, ratio)


@triton.jit
def _ratio(x1, x2, RATIO: tl.constexpr):
    # the importance ratio from its raw sources (masked lanes hold 0 or 1: ratio 1)
    if RATIO == 0:    # log_ratio
        r = tl.exp(x1)
    elif RATIO == 1:  # target and behaviour log-probabilities
        r = tl.exp(x1 - x2)
    else:             # target and behaviour probabilities of the taken action
        r = x1 / x2
    return r


@triton.jit
def _tile(i_c, T, o_p, m_r, REVERSE: tl.constexpr, DESCEND: tl.constexpr,
          BLOCK_T: tl.constexpr):
    # times and mask of chunk i_c, counted from the boundary, lanes in ascending time (in
    # descending time with DESCEND); the tile shape is m_r's with o_p's lanes ([BN, BT] or
    # [G, BN, Q, E])
    if DESCEND:
        t = T - 1 - i_c * BLOCK_T - o_p
    elif REVERSE:
        t = T - (i_c + 1) * BLOCK_T + o_p
    else:
        t = i_c * BLOCK_T + o_p
    m = m_r & (t >= 0) & (t < T)
    return tl.broadcast_to(t, m.shape), m


@triton.jit
def _raw(P0, P1, TERM, TRUNC, NV, X1, X2, G, L, o0, o1, o2, o3, o4, o5, o6, o7, o8,
         s0t, s1t, s2t, s3t, s4t, s5t, s6t, s7t, s8t, t, m, T, gamma, lmbda,
         EST: tl.constexpr, REVERSE: tl.constexpr, VNEXT: tl.constexpr, RATIO: tl.constexpr,
         HAS_TERM: tl.constexpr, HAS_TRUNC: tl.constexpr, GAMMA_T: tl.constexpr,
         LAMBDA_T: tl.constexpr, STARTS_AT: tl.constexpr, CONTIG: tl.constexpr):
    """Every load of one chunk that depends on nothing loaded, issued together and consumed
    later (so the next chunk's loads can be in flight while this one is scanned). Slots an
    estimator does not use hold zeros. Returns (p0, p1, p1[t+1], flag0, flag1, next values,
    ratio sources x1, x2, gamma, lambda)."""
    zf = tl.zeros(t.shape, tl.float32)
    zb = tl.zeros(t.shape, tl.int1)
    p1 = zf
    p1n = zf
    f0 = zb
    f1 = zb
    nvd = zf
    x1 = zf
    x2 = zf
    if GAMMA_T:
        g = _load(G, o7, t, s7t, m, 1.0, (CONTIG >> 7) & 1)
    else:
        g = tl.full(t.shape, gamma, tl.float32)   # fp32 even if gamma is fp64
    if LAMBDA_T:
        lam = _load(L, o8, t, s8t, m, 1.0, (CONTIG >> 8) & 1)
    else:
        lam = tl.full(t.shape, lmbda, tl.float32)
    if EST == 7:
        p0 = _load(P0, o0, t, s0t, m, 1.0, (CONTIG >> 0) & 1)    # a
        p1 = _load(P1, o1, t, s1t, m, 0.0, (CONTIG >> 1) & 1)    # b
    elif REVERSE:
        p0 = _load(P0, o0, t, s0t, m, 0.0, (CONTIG >> 0) & 1)    # rewards
        if HAS_TERM:
            f0 = _load_flag(TERM, o2, t, s2t, m, (CONTIG >> 2) & 1)
        if HAS_TRUNC:
            f1 = _load_flag(TRUNC, o3, t, s3t, m, (CONTIG >> 3) & 1)
        if EST == 1 or EST == 3 or EST == 4:  # values | q_taken at t
            p1 = _load(P1, o1, t, s1t, m, 0.0, (CONTIG >> 1) & 1)
        # values[t+1]: the successor value (E2 encodings; discounted returns read values only
        # at bootstrap steps: loading the absent tensor's stand-in cost 2x, 65536x128 fp32
        # 73 us vs GAE's 47 on the H200), and V-trace's vs[t+1] = values[t+1] + x[t+1]
        if (VNEXT >= 2 and EST != 0) or EST == 3:
            p1n = _load(P1, o1, t + 1, s1t, m & (t + 1 < T), 0.0, (CONTIG >> 1) & 1)
        if VNEXT == 1:                        # E1: dense next values
            nvd = _load(NV, o4, t, s4t, m, 0.0, (CONTIG >> 4) & 1)
        if EST == 3 or EST == 4:              # ratio at t (V-trace) or t+1 (Retrace: c[t+1])
            t_r = t if EST == 3 else t + 1
            m_r = m if EST == 3 else m & (t + 1 < T)
            other = 1.0 if RATIO == 2 else 0.0
            x1 = _load(X1, o5, t_r, s5t, m_r, other, (CONTIG >> 5) & 1)
            if RATIO != 0:
                x2 = _load(X2, o6, t_r, s6t, m_r, other, (CONTIG >> 6) & 1)
    else:
        p0 = _load(P0, o0, t, s0t, m, 0.0, (CONTIG >> 0) & 1)    # inputs z
        # the reset lands on the first step of the new episode
        if STARTS_AT:
            f0 = _load_flag(TERM, o2, t, s2t, m, (CONTIG >> 2) & 1)
        else:
            f0 = _load_flag(TERM, o2, t - 1, s2t, m & (t >= 1), (CONTIG >> 2) & 1)
    return p0, p1, p1n, f0, f1, nvd, x1, x2, g, lam


@triton.jit
def _vnext(NV, o_nv, s_nv, t, m, trunc, last, v_succ, nvd, boot_last, VNEXT: tl.constexpr,
           CONTIG: tl.constexpr):
    """V(s'_t) for every lane (ALGORITHMS.md §1.3); the caller reads it only where the step is
    not terminated. ``boot_last`` is per row, broadcastable against the tile."""
    if VNEXT == 0:
        vn = tl.zeros(t.shape, tl.float32)
    elif VNEXT == 1:  # E1: dense next values
        vn = nvd
    else:             # E2: values[t+1], or a bootstrap at truncations and at t = T-1
        if VNEXT == 2:   # a load that depends on the flags: read only at bootstrap steps
            boot_v = _load(NV, o_nv, t, s_nv, m & (trunc | last), 0.0, (CONTIG >> 4) & 1)
        elif VNEXT == 3:
            boot_v = tl.where(last, boot_last, 0.0)
        else:
            boot_v = tl.zeros(t.shape, tl.float32)
        vn = tl.where(trunc | last, boot_v, v_succ)
    return vn


@triton.jit
def _pack(a, b):
    # (a, b) as one int64 word, published with a single 64-bit store (look-back strategy). A
    # NaN `a` is made canonical so that no published word equals the all-ones "not yet" mark.
    a = tl.where(a != a, float("nan"), a)
    lo = a.to(tl.int32, bitcast=True).to(tl.uint32, bitcast=True).to(tl.int64)
    return lo | (b.to(tl.int32, bitcast=True).to(tl.int64) << 32)


@triton.jit
def _unpack(w):
    return (w.to(tl.int32).to(tl.float32, bitcast=True),
            (w >> 32).to(tl.int32).to(tl.float32, bitcast=True))


@triton.jit
def _fold_published(AGG, base, i_s, m_n, BLOCK_N: tl.constexpr, WINDOW: tl.constexpr):
    """The value entering span ``i_s`` of each row: every earlier span publishes its summary
    (a, b) to AGG, span 0 as the reset (0, value leaving it); fold the newest 8 summaries in one
    scan once all are published, then walk back WINDOW at a time only until the composition is
    a reset (span 0 always is). AGG starts all-ones ("not yet").

    Why the first window is 8 spans: a window is folded once all its spans have published, so
    a wide first window waits on spans far back that a reset nearby makes irrelevant, while
    older windows are long published when a walk reaches them. H200, fp32, GAE, forced
    look-back, first and only window 8 vs 64-256 (seventeenth session, kernel_ab.py): 1x1048576
    1x512/w1/2l 9.6 vs 13.5 us, 1x256/w1/2l 8.3 vs 14.8; 8x262144 1x256/w1/2l 18.5 vs 20.2;
    linear scan (a in [0.8, 0.99], no resets) 1x1048576 1x256/w1 6.3 vs 15.1; 16 and 32 in
    between. The later windows stay WINDOW wide: a row without resets and a product of a that
    never underflows (γλ = 1) walks back to span 0, window by window.

    Why fold rather than chain leaving values (a decoupled look-back): no span waits on another
    span's look-back, and the loop keeps 46 registers at 1x2048/w8 where the chained one took
    74-80 (sm_90). H200, forced lookback 1x1024/w4, chained -> folded: discounted returns
    1x1048576 18.1 -> 12.0 us, 8x262144 26.3 -> 21.3, 32x32768 11.1 -> 10.0; GAE 1x1048576
    20.0 -> 18.3; V-trace 32x32768 17.9 -> 16.6 (fourteenth session, kernel_ab.py). Publishing
    the value leaving a span once folded, for later spans to stop at, cost 0.5-1 us on every
    cell (seventeenth session, patches/lookback_inclusive.patch): not done.
    Earlier spans have lower program ids (grid (row blocks, spans)), so they are resident or
    done when this one runs and the spin ends; it is bounded anyway (never a hang: rows still
    waiting after 2**22 rounds get NaN)."""
    FIRST: tl.constexpr = 8 if WINDOW > 8 else WINDOW
    hi = tl.zeros([BLOCK_N], tl.int32) + i_s                  # spans [hi - W, hi) come next
    g_a = tl.full([BLOCK_N], 1.0, tl.float32)                 # composition of spans [hi, i_s)
    g_b = tl.zeros([BLOCK_N], tl.float32)
    x_in = tl.zeros([BLOCK_N], tl.float32)
    todo = m_n.to(tl.int32)
    spins = tl.zeros([], tl.int32)
    # the nearest FIRST spans, until every row has folded them once
    first = tl.where(hi == i_s, todo, 0)
    while (tl.max(first, 0) > 0) & (spins < 4194304):
        hi, todo, g_a, g_b, x_in = _fold_window(AGG, base, hi, first, todo, g_a, g_b, x_in,
                                                FIRST)
        first = tl.where(hi == i_s, todo, 0)
        spins += 1
    while (tl.max(todo, 0) > 0) & (spins < 4194304):
        hi, todo, g_a, g_b, x_in = _fold_window(AGG, base, hi, todo, todo, g_a, g_b, x_in,
                                                WINDOW)
        spins += 1
    return tl.where(todo != 0, float("nan"), x_in)


@triton.jit
def _fold_window(AGG, base, hi, active, todo, g_a, g_b, x_in, W: tl.constexpr):
    """One look at spans [hi - W, hi) of the ``active`` rows: once all W have published, compose
    them before (g_a, g_b); a row is done at a reset (or span 0), else it moves W back."""
    o_w = tl.arange(0, W)[None, :]                            # [1, W] oldest .. newest
    js = hi[:, None] - W + o_w                                # [BN, W]
    ok = (active[:, None] != 0) & (js >= 0)
    w = tl.load(AGG + base[:, None] + js, mask=ok, other=0, volatile=True)
    ready = tl.min(tl.where(ok & (w == -1), 0, 1), 1) != 0
    a_w, b_w = _unpack(w)
    a_w = tl.where(ok, a_w, 1.0)
    b_w = tl.where(ok, b_w, 0.0)
    s_a, s_b = tl.associative_scan((a_w, b_w), 1, _combine)
    h_a = tl.sum(tl.where(o_w == W - 1, s_a, 0.0), 1)
    h_b = tl.sum(tl.where(o_w == W - 1, s_b, 0.0), 1)
    n_a, n_b = _combine(h_a, h_b, g_a, g_b)                    # later spans apply last
    step = (active != 0) & ready
    # a reset composed in, or span 0 reached (its reset holds even if a later a is NaN)
    done = step & ((n_a == 0.0) | (hi <= W))
    more = step & ~done
    return (tl.where(more, hi - W, hi), tl.where(done, 0, todo), tl.where(more, n_a, g_a),
            tl.where(more, n_b, g_b), tl.where(done, n_b, x_in))


@triton.jit
def _split_entering(a, b, c, SPLIT: tl.constexpr, ROWS: tl.constexpr):
    """[BN]: the value entering each tile row's chunk when every row of the input lies on
    SPLIT consecutive tile rows (chunk j on row j, later chunks on later rows) and ``c`` enters
    the last of them: row j receives what row j + 1 leaves, (a, b) being each row's chunk
    composed (a backward scan). The tile rows lie on different warps: this goes through shared
    memory (PTX, 2x1024/w2: 12 more bar.sync a kernel than unsplit)."""
    a2 = tl.reshape(a, [ROWS, SPLIT])
    b2 = tl.reshape(b, [ROWS, SPLIT])
    o_s = tl.arange(0, SPLIT)[None, :]
    ent = tl.reshape(c, [ROWS, SPLIT])
    acc = tl.sum(tl.where(o_s == SPLIT - 1, ent, 0.0), 1)        # [ROWS]
    for j in tl.static_range(SPLIT - 1, 0, -1):
        acc = _apply(tl.sum(tl.where(o_s == j, a2, 0.0), 1),
                     tl.sum(tl.where(o_s == j, b2, 0.0), 1), acc)
        ent = tl.where(o_s == j - 1, acc[:, None], ent)
    return tl.reshape(ent, [ROWS * SPLIT])


@triton.jit
def _split_first(x, SPLIT: tl.constexpr, ROWS: tl.constexpr):
    # [BN]: on all SPLIT tile rows of an input row, the value its first tile row holds (what
    # leaves the row's earliest chunk: the carry of its next iteration)
    x2 = tl.reshape(x, [ROWS, SPLIT])
    f = tl.sum(tl.where(tl.arange(0, SPLIT)[None, :] == 0, x2, 0.0), 1)
    return tl.reshape(tl.broadcast_to(f[:, None], [ROWS, SPLIT]), [ROWS * SPLIT])


@triton.jit
def _fold_spans(WA, WB, base, n, m_n, x, FOLD: tl.constexpr):
    """``x`` carried through spans 0 .. n-1 of each row (summaries (WA, WB) in scan order, n <=
    FOLD): the chunked fix-up pass finding its own carry with one associative scan."""
    o_k = tl.arange(0, FOLD)[None, :]                         # [1, FOLD]
    ok = m_n[:, None] & (o_k < n)
    a = tl.load(WA + base[:, None] + o_k, mask=ok, other=1.0)
    b = tl.load(WB + base[:, None] + o_k, mask=ok, other=0.0)
    s_a, s_b = tl.associative_scan((a, b), 1, _combine)
    # the last lane composes all n spans (pad lanes are identities)
    h_a = tl.sum(tl.where(o_k == FOLD - 1, s_a, 0.0), 1)
    h_b = tl.sum(tl.where(o_k == FOLD - 1, s_b, 0.0), 1)
    return _apply(h_a, h_b, x)


@triton.jit
def fused_scan_kernel(
    # per-step inputs [N, T] with (row stride, time stride); unused ones are dummies
    P0, s0r, s0t,          # rewards | inputs z | a (linear)
    P1, s1r, s1t,          # values | q_taken | b (linear)
    TERM, s2r, s2t,        # terminated | dones | starts
    TRUNC, s3r, s3t,       # truncated
    NV, s4r, s4t,          # next_values | bootstrap_values | expected_next_q
    X1, s5r, s5t,          # ratio source 1
    X2, s6r, s6t,          # ratio source 2
    G, s7r, s7t,           # per-step gamma
    L, s8r, s8t,           # per-step lambda
    ROW0, ROW1,            # per-row: last_value | seed | init, and done_prev
    O0, o0r, o0t,          # first output
    O1, o1r, o1t,          # second output (GAE returns, V-trace pg advantages)
    WA, WB, WC, K,         # span workspaces [N, K]: chunked (a, b, carry) fp32; look-back AGG
    N, T, CHUNKS_PER_SPAN,
    gamma, lmbda, rho_bar, c_bar, pg_rho_bar,
    EST: tl.constexpr, REVERSE: tl.constexpr, VNEXT: tl.constexpr, RATIO: tl.constexpr,
    HAS_TERM: tl.constexpr, HAS_TRUNC: tl.constexpr, GAMMA_T: tl.constexpr,
    LAMBDA_T: tl.constexpr, HAS_ROW0: tl.constexpr, HAS_ROW1: tl.constexpr,
    PG_MIX: tl.constexpr, STARTS_AT: tl.constexpr, PHASE: tl.constexpr, FOLD: tl.constexpr,
    PDL: tl.constexpr, PREFETCH: tl.constexpr, NEXT_GATHER: tl.constexpr, TWO_LEVEL: tl.constexpr,
    GROUP: tl.constexpr, DESCEND: tl.constexpr, CONTIG_ROWS: tl.constexpr, SPLIT: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_T: tl.constexpr, ALIGN_T: tl.constexpr, ALIGN_N: tl.constexpr,
):
    """PHASE 0: row block, each program walks whole rows. The other phases split every row into
    K spans of CHUNKS_PER_SPAN chunks, one program per (rows, span), ALGORITHMS.md §2.5:
    chunked = PHASE 1 writes each span's summary to (WA, WB), PHASE 2 recomputes the span from
    the value entering it and writes outputs. That value comes from chunk_carry_kernel (WC) when
    FOLD = 0, else PHASE 2 folds the earlier spans' summaries itself (FOLD >= K: two launches
    instead of three);
    PHASE 3 (look-back) does all of it in one launch with spans of one chunk: scan the chunk,
    publish its summary, fold the published summaries in windows of FOLD spans
    (``_fold_published``), apply the carry to the scan still in registers, write (inputs read
    once). AGG (WA) is filled with "not yet" by a launch before (``fill_kernel``).
    PHASE 4: PHASE 3 on a persistent double-buffered AGG that needs no fill launch (a graph
    node before the scan cost 1.4-2.3 us a call, H200, nineteenth session: compare_configs.py
    --fill-ab): each program publishes to the half that its own slot of half 0 says is clean
    and resets its slot of the other half (a barrier orders every warp's read of the slot
    before the program's stores to it). A first version flipped a parity word once a shared
    counter said every program had finished: 4.5-9 us slower at 4096-8192 programs than a
    filled workspace (one atomic on one address per program; twentieth session, fill-ab).
    PDL: the launch is a programmatic dependent one (``launch_pdl``, sm_90+): a call's first
    launch (PHASE 0, 1, 4) waits (``gdc_wait``) for the kernels before it before any load or
    store; PHASE 1 then lets the next launch start once all its programs have waited; PHASE 2
    issues its first loads before it waits for the previous launch's summaries, PHASE 3 its
    whole chunk before it waits for the fill of AGG (the inputs were complete before the
    call's first launch let them start).

    TWO_LEVEL (backward scans, time-last, every row inside one warp): the chunk is a
    [G, BN, Q, E] tile (G = GROUPS = min(BLOCK_T / E, 32) groups of E = GROUP (4, 8, 16)
    contiguous steps, one a thread, Q = PARTS = BLOCK_T / EG parts in registers), scanned by
    ``_suffix_two_level``; GROUP is 4 without TWO_LEVEL.
    DESCEND (backward scans of time-major buffers): lanes in descending time, a forward scan.
    CONTIG_ROWS: bit i set when per-step input i (P0, P1, TERM, TRUNC, NV, X1, X2, G, L) has
    row stride 1 in a [BN, BT] tile of BN >= 4 rows (``_offsets``).
    SPLIT (row block, time-last; forward scans one input row a program): each row spread over
    SPLIT of the tile's BN rows (so over SPLIT warps), tile row j taking chunk j of every SPLIT
    consecutive chunks; after the scan the values entering them are composed across those rows
    (one input row a program: a scan across the warps, but for backward SPLIT 2; else
    ``_split_entering``), so one program walks a row in T / (SPLIT * BLOCK_T) iterations with
    SPLIT warps in flight.
    ALIGN_T (1, 2, 4 or 8) divides T and every row stride of the per-step inputs and outputs;
    ALIGN_N divides N and every time stride: what a load needs to take several steps (rows) an
    instruction, and Triton cannot know below 16 (it specialises an int on divisibility by 16
    only). 1 says nothing."""
    GROUPS: tl.constexpr = (32 if BLOCK_T >= 32 * GROUP else
                            (BLOCK_T // GROUP if BLOCK_T >= GROUP else 1))
    PARTS: tl.constexpr = BLOCK_T // (GROUP * GROUPS) if TWO_LEVEL else 1
    tl.static_assert(not TWO_LEVEL or (REVERSE and BLOCK_T >= GROUP))
    tl.static_assert(not DESCEND or (REVERSE and not TWO_LEVEL))
    tl.static_assert(CONTIG_ROWS == 0 or (not TWO_LEVEL and BLOCK_N >= 4))
    # forward split rows: one input row a program (the exchange is a scan across the tile rows)
    tl.static_assert(SPLIT == 1 or (PHASE == 0 and not DESCEND and BLOCK_N % SPLIT == 0
                                    and (REVERSE or BLOCK_N == SPLIT)))
    ROWS: tl.constexpr = BLOCK_N // SPLIT                   # rows of the input a program
    STEP: tl.constexpr = BLOCK_T * SPLIT                    # steps of a row an iteration
    if ALIGN_T > 1:   # (the masks t < T must hold across a vector too)
        T, s0r, s1r, s2r, s3r, s4r, s5r, s6r, s7r, s8r, o0r, o1r = _multiples(
            T, s0r, s1r, s2r, s3r, s4r, s5r, s6r, s7r, s8r, o0r, o1r, ALIGN_T)
    if ALIGN_N > 1:
        N, s0t, s1t, s2t, s3t, s4t, s5t, s6t, s7t, s8t, o0t, o1t = _multiples(
            N, s0t, s1t, s2t, s3t, s4t, s5t, s6t, s7t, s8t, o0t, o1t, ALIGN_N)
    i_n = tl.program_id(0)
    i_s = tl.program_id(1)
    o_v = tl.arange(0, BLOCK_N)                             # [BN] tile rows
    if SPLIT > 1:
        o_n = i_n * ROWS + o_v // SPLIT
    else:
        o_n = i_n * BLOCK_N + o_v
    m_n = o_n < N
    m_r = _rows(m_n, TWO_LEVEL)
    r64 = _rows(o_n.to(tl.int64), TWO_LEVEL)               # [BN, 1] or [1, BN, 1, 1]
    if TWO_LEVEL:
        o_e = tl.arange(0, GROUP)[None, None, None, :]      # step within a group
        o_p = ((tl.arange(0, PARTS)[None, None, :, None] * GROUPS
                + tl.arange(0, GROUPS)[:, None, None, None]) * GROUP + o_e)   # [G, 1, Q, E]
    else:
        o_p = tl.arange(0, BLOCK_T)[None, :]                # [1, BT] lanes, ascending time
    # the lane a chunk ends on in scan order: its value is the carry into the next chunk
    P_END: tl.constexpr = 0 if REVERSE and not DESCEND else BLOCK_T - 1
    # lanes in time: tile row j of a split row starts j chunks into the iteration's steps
    o_t = o_p
    if SPLIT > 1:
        o_t = o_p + _rows((o_v % SPLIT) * BLOCK_T, TWO_LEVEL)
    # the scan runs toward the boundary: backward over ascending lanes, forward otherwise
    SCAN_REVERSE: tl.constexpr = REVERSE and not DESCEND
    # split rows exchange by one scan across the tile rows (a reverse scan for backward ones:
    # the carry enters the latest chunk, on the last tile row; the row's last value leaves its
    # earliest); backward tiles of SPLIT 2 or of several input rows by _split_entering
    SPLIT_SCAN: tl.constexpr = SPLIT > 1 and ROWS == 1 and (SPLIT > 2 or not SCAN_REVERSE)
    V_LEAVE: tl.constexpr = 0 if SCAN_REVERSE else SPLIT - 1  # the tile row a carry leaves

    if PDL and (PHASE == 0 or PHASE == 1 or PHASE == 4):
        # a call's first launch as a programmatic dependent one: it waits for the kernels
        # before it here, before it touches memory, so it is ordered as a plain launch is and
        # its launch overlaps the previous kernel's end
        tl.extra.cuda.gdc_wait()
    # the value entering this program: x[T] = 0 (backward), the seed x[-1] (forward), or the
    # span's carry (chunked, look-back)
    init = tl.zeros([BLOCK_N], tl.float32)
    if HAS_ROW0:
        if REVERSE == 0 or EST == 7:   # (backward estimators use ROW0 for last_value)
            init = tl.load(ROW0 + o_n, mask=m_n, other=0.0).to(tl.float32)
    boot_last = tl.zeros([BLOCK_N], tl.float32)   # V(s_T) given per row (VNEXT 3)
    if VNEXT == 3:
        boot_last = tl.load(ROW0 + o_n, mask=m_n, other=0.0).to(tl.float32)
    d_prev = tl.zeros([BLOCK_N], tl.int1)         # the done flag before t = 0 (forward scans)
    if HAS_ROW1:
        d_prev = tl.load(ROW1 + o_n, mask=m_n, other=0) != 0
    c_lo = i_s * CHUNKS_PER_SPAN
    c_hi = tl.minimum(c_lo + CHUNKS_PER_SPAN, tl.cdiv(T, STEP))
    carry = init
    row_agg = o_n.to(tl.int64) * K   # PHASE 3 and 4: where each row's span summaries start
    if PHASE == 4:
        # a persistent workspace (kernels/lookback_state.py) of two halves of N*K words: after
        # every launch one half holds that launch's summaries and the other is all "not yet".
        # This program's own slot in half 0 (only it writes there) says which: it publishes to
        # the clean half and resets its slot of the other, so no fill launch and no counter.
        nk = (tl.zeros([], tl.int64) + N) * K       # (N may be specialised to 1)
        # (volatile: past L1, which the fold's volatile loads of this half bypass too)
        own = tl.load(WA + row_agg + i_s, mask=m_n, other=-1, volatile=True)
        other = tl.where(own == -1, nk, 0)
        # every warp has read the slot before any stores to it: a row's value is held by all
        # the program's warps and stored by one, so without the barrier a warp that loads late
        # could see this launch's reset or summary and pick the other half (num_warps > 1)
        tl.debug_barrier()
        tl.store(WA + other + row_agg + i_s, tl.full([BLOCK_N], -1, tl.int64), mask=m_n)
        row_agg += nk - other
    if PHASE == 1:
        carry = tl.zeros([BLOCK_N], tl.float32)
        if PDL:
            # the next launch (carry pass or fix-up) may start once every program of this one
            # has waited for the kernels before the call (it reads inputs before its own wait,
            # gdc_wait, for what this one writes)
            tl.extra.cuda.gdc_launch_dependents()

    carry_a = tl.full([BLOCK_N], 1.0, tl.float32)   # PHASE 1: the span's composed slope
    if PREFETCH:
        t, m = _tile(c_lo, T, o_t, m_r, REVERSE, DESCEND, STEP)
        q0, q1, q2, q3, q4, q5, q6, q7, q8, q9 = _raw(
            P0, P1, TERM, TRUNC, NV, X1, X2, G, L, r64 * s0r, r64 * s1r, r64 * s2r,
            r64 * s3r, r64 * s4r, r64 * s5r, r64 * s6r, r64 * s7r, r64 * s8r, s0t, s1t,
            s2t, s3t, s4t, s5t, s6t, s7t, s8t, t, m, T, gamma, lmbda, EST, REVERSE, VNEXT,
            RATIO, HAS_TERM, HAS_TRUNC, GAMMA_T, LAMBDA_T, STARTS_AT, CONTIG_ROWS)
    if PHASE == 2:
        # the fix-up's first loads are in flight; only now the previous launch's summaries
        if PDL:
            tl.extra.cuda.gdc_wait()
        if FOLD == 0:
            carry = tl.load(WC + o_n.to(tl.int64) * K + i_s, mask=m_n, other=0.0)
        else:
            carry = _fold_spans(WA, WB, o_n.to(tl.int64) * K, i_s, m_n, init, FOLD)
    for i_c in range(c_lo, c_hi):
        t, m = _tile(i_c, T, o_t, m_r, REVERSE, DESCEND, STEP)
        if PREFETCH:
            # this chunk's loads were issued last iteration; issue the next chunk's now
            p0, p1, p1n, f0, f1, nvd, x1, x2, g, lam = q0, q1, q2, q3, q4, q5, q6, q7, q8, q9
            t_f, m_f = _tile(i_c + 1, T, o_t, m_r, REVERSE, DESCEND, STEP)
            m_f = m_f & (t_f * 0 + i_c + 1 < c_hi)   # full-shape: the interpreter needs it
        else:
            t_f, m_f = t, m
        r0, r1, r2, r3, r4, r5, r6, r7, r8, r9 = _raw(
            P0, P1, TERM, TRUNC, NV, X1, X2, G, L, r64 * s0r, r64 * s1r, r64 * s2r,
            r64 * s3r, r64 * s4r, r64 * s5r, r64 * s6r, r64 * s7r, r64 * s8r, s0t, s1t,
            s2t, s3t, s4t, s5t, s6t, s7t, s8t, t_f, m_f, T, gamma, lmbda, EST, REVERSE,
            VNEXT, RATIO, HAS_TERM, HAS_TRUNC, GAMMA_T, LAMBDA_T, STARTS_AT, CONTIG_ROWS)
        if PREFETCH:
            q0, q1, q2, q3, q4, q5, q6, q7, q8, q9 = r0, r1, r2, r3, r4, r5, r6, r7, r8, r9
        else:
            p0, p1, p1n, f0, f1, nvd, x1, x2, g, lam = r0, r1, r2, r3, r4, r5, r6, r7, r8, r9

        if EST == 7:
            # ---- generic linear recurrence, either direction: a and b given
            a = p0
            b = p1
        elif REVERSE:
            # ---- backward estimators: flags and successor values (ALGORITHMS.md §1.2-1.3)
            r = p0
            term = f0
            trunc = f1
            last = t == T - 1
            cut = term | trunc | last
            boot = cut & (~term)
            vn = _vnext(NV, r64 * s4r, s4t, t, m, trunc, last, p1n, nvd,
                        _rows(boot_last, TWO_LEVEL), VNEXT, CONTIG_ROWS)
            if EST == 0:    # discounted returns, §3.1
                a = tl.where(cut, 0.0, g)
                b = r + tl.where(boot, g * vn, 0.0)
            elif EST == 1:  # GAE, §3.2
                v = p1
                a = tl.where(cut, 0.0, g * lam)
                b = r + tl.where(term, 0.0, g * vn) - v
            elif EST == 2:  # TD(lambda) returns, §3.3
                a = tl.where(cut, 0.0, g * lam)
                b = tl.where(term, r, tl.where(boot, r + g * vn, r + g * (1.0 - lam) * vn))
            elif EST == 3:  # V-trace, §3.4: c at the element's own index t
                v = p1
                ratio = _ratio(x1, x2, RATIO)
                rho = _clip(ratio, rho_bar)
                a = tl.where(cut, 0.0, g * lam * _clip(ratio, c_bar))
                b = rho * (r + tl.where(term, 0.0, g * vn) - v)
            else:           # Retrace, §3.5: c of the NEXT step, c[t+1]
                q = p1
                # a per-step λ[t] belongs to the transition t -> t+1, like γ[t]
                a = tl.where(cut, 0.0, g * lam * _clip(_ratio(x1, x2, RATIO), c_bar))
                b = r + tl.where(term, 0.0, g * vn) - q
        else:
            # ---- forward scans: the reset lands on the first step of the new episode
            b = p0
            reset = f0
            if not STARTS_AT:
                if HAS_ROW1:
                    reset = reset | (_rows(d_prev, TWO_LEVEL) & (t == 0))
            if EST == 5:    # eligibility traces, §3.6
                a = tl.where(reset, 0.0, g * lam)
            else:           # episodic prefix sum, §3.7
                a = tl.where(reset, 0.0, 1.0)

        # identity padding, then the scan with the one combine, toward the boundary
        a = tl.where(m, a, 1.0)
        b = tl.where(m, b, 0.0)
        if TWO_LEVEL:
            s_a, s_b, e_a, e_b = _suffix_two_level(a, b, o_e, GROUPS, PARTS, GROUP)
        elif EST == 3 and PHASE != 1 and not NEXT_GATHER:
            # V-trace's outputs read x[t+1] too: the scan carries a second composition
            # for it (_combine_next). A tl.gather of the next lane across warps instead cost
            # up to 2x the kernel's time (H200, fp32, 1024x8192 1x512/w4: 124 us with the
            # gather, 67 with x[t+1] replaced by x).
            s_a, s_b, n_a, n_b = tl.associative_scan(
                (a, b, tl.full(a.shape, 1.0, tl.float32), tl.zeros(a.shape, tl.float32)), 1,
                _combine_next, reverse=SCAN_REVERSE)
        else:
            s_a, s_b = tl.associative_scan((a, b), 1, _combine, reverse=SCAN_REVERSE)
        if PHASE >= 3:
            # the span is this one chunk: publish its summary (span 0: the value leaving it, as
            # a reset), fold the earlier ones, then finish the chunk still held in registers
            span_a = _at(s_a, o_p == P_END, TWO_LEVEL)
            span_b = _at(s_b, o_p == P_END, TWO_LEVEL)
            o_w = row_agg + i_s
            if PDL:
                tl.extra.cuda.gdc_wait()    # the fill of AGG has landed
            if i_s == 0:
                tl.store(WA + o_w, _pack(tl.zeros([BLOCK_N], tl.float32),
                                         _apply(span_a, span_b, carry)), mask=m_n)
            else:
                tl.store(WA + o_w, _pack(span_a, span_b), mask=m_n)
                carry = _fold_published(WA, row_agg, i_s, m_n, BLOCK_N, FOLD)
        c_in = carry            # the value entering each tile row's chunk
        if SPLIT_SCAN:
            # one input row a program: scan the tile rows' summaries across the warps; the
            # second composition leaves each row's own chunk out, so it is the value entering
            # it (twelfth session: 4x256/w4/sp4 discounted returns 1024x8192 33.5 -> 27.3 µs,
            # 8x512/w8/sp8 256x8192 18.5 -> 10.8 against _split_entering; at SPLIT 2 no gain)
            f_a, f_b, e_sa, e_sb = tl.associative_scan(
                (_at(s_a, o_p == P_END, TWO_LEVEL), _at(s_b, o_p == P_END, TWO_LEVEL),
                 tl.full([BLOCK_N], 1.0, tl.float32), tl.zeros([BLOCK_N], tl.float32)), 0,
                _combine_next, reverse=SCAN_REVERSE)
            c_in = _apply(e_sa, e_sb, carry)
        elif SPLIT > 1:
            c_in = _split_entering(_at(s_a, o_p == P_END, TWO_LEVEL),
                                   _at(s_b, o_p == P_END, TWO_LEVEL), carry, SPLIT, ROWS)
        x = _apply(s_a, s_b, _rows(c_in, TWO_LEVEL))

        if PHASE != 1:
            if EST == 1:
                y0 = x
                y1 = x + v
            elif EST == 3:
                vs = v + x
                # vs[t+1] = values[t+1] + x[t+1]; x[t+1] at the chunk's last lane is the
                # carry entering the chunk
                if TWO_LEVEL:
                    # inside a group the next step is in the same thread; after a group's
                    # last step comes the value entering it from the later groups
                    x_next = _apply(e_a, e_b, _rows(c_in, TWO_LEVEL))
                    for k in tl.static_range(0, GROUP - 1):
                        x_next = tl.where(o_e == k, _step(x, o_e, k + 1)[:, :, :, None],
                                          x_next)
                elif NEXT_GATHER:
                    # each row inside one warp (or one thread): the next lane is a shuffle
                    # (a register) away; the lane after the chunk's time-last one holds the carry
                    if DESCEND:
                        src = tl.maximum(o_p - 1, 0)
                    else:
                        src = tl.minimum(o_p + 1, BLOCK_T - 1)
                    x_next = tl.gather(x, src + tl.zeros([BLOCK_N, BLOCK_T], tl.int32), 1)
                    x_next = tl.where(o_p == BLOCK_T - 1 - P_END, c_in[:, None], x_next)
                else:
                    # (n is the identity at the last lane)
                    x_next = _apply(n_a, n_b, c_in[:, None])
                vs_next = p1n + x_next
                if PG_MIX:
                    w = lam * vs_next + (1.0 - lam) * vn
                else:
                    w = vs_next
                w = tl.where(term, 0.0, tl.where(boot, vn, w))
                y0 = vs
                y1 = _clip(ratio, pg_rho_bar) * (r + g * w - v)
            elif EST == 4:
                y0 = q + x
                y1 = x
            else:
                y0 = x
                y1 = x
            tl.store(O0 + r64 * o0r + t.to(tl.int64) * o0t, y0.to(O0.dtype.element_ty),
                     mask=m)
            if EST == 1 or EST == 3:
                tl.store(O1 + r64 * o1r + t.to(tl.int64) * o1t,
                         y1.to(O1.dtype.element_ty), mask=m)
        if SPLIT_SCAN:
            # what leaves the row's last chunk in scan order, on every tile row
            carry = tl.sum(tl.where(o_v == V_LEAVE, _apply(f_a, f_b, carry), 0.0), 0) + \
                tl.zeros([BLOCK_N], tl.float32)
        else:
            # the chunk's end lane composes the whole chunk (pad lanes are identities)
            carry = _at(x, o_p == P_END, TWO_LEVEL)
            if SPLIT > 1:
                carry = _split_first(carry, SPLIT, ROWS)
        if PHASE == 1:
            carry_a = _compose_a(_at(s_a, o_p == P_END, TWO_LEVEL), carry_a)
    if PHASE == 1:
        tl.store(WA + o_n.to(tl.int64) * K + i_s, carry_a, mask=m_n)
        tl.store(WB + o_n.to(tl.int64) * K + i_s, carry, mask=m_n)


@triton.jit
def chunk_carry_kernel(WA, WB, WC, ROW0, N, K, HAS_INIT: tl.constexpr, BLOCK_K: tl.constexpr,
                       PDL: tl.constexpr):
    """Carry pass of the chunked strategy: for one row, the value entering each span is the
    composition of all earlier spans (scan order) applied to the initial value, i.e. an
    exclusive scan of the span summaries with the same combine. PDL: a programmatic dependent
    launch between the two phases of fused_scan_kernel (it lets the fix-up start, then waits
    for the summaries)."""
    if PDL:
        tl.extra.cuda.gdc_launch_dependents()
        tl.extra.cuda.gdc_wait()
    i_n = tl.program_id(0).to(tl.int64)
    o_k = tl.arange(0, BLOCK_K)
    carry = tl.full([], 0.0, tl.float32)
    if HAS_INIT:
        carry = tl.load(ROW0 + i_n).to(tl.float32)
    for k0 in range(0, K, BLOCK_K):
        m = k0 + o_k < K
        a = tl.load(WA + i_n * K + k0 + o_k, mask=m, other=1.0)
        b = tl.load(WB + i_n * K + k0 + o_k, mask=m, other=0.0)
        s_a, s_b = tl.associative_scan((a, b), 0, _combine)
        x = _apply(s_a, s_b, carry)                                # value leaving span k
        x_prev = tl.gather(x, tl.maximum(o_k - 1, 0), 0)
        tl.store(WC + i_n * K + k0 + o_k, tl.where(o_k == 0, carry, x_prev), mask=m)
        carry = tl.sum(tl.where(o_k == BLOCK_K - 1, x, 0.0), axis=0)


@triton.jit
def fill_kernel(W, n, VALUE: tl.constexpr, BLOCK: tl.constexpr, PDL: tl.constexpr):
    """W[:n] = VALUE (int64): the look-back's "not yet" marks. PDL: a call's first launch, it
    waits for the kernels before it (``gdc_wait``), then lets the look-back launch that follows
    start; that one scans its chunk, then waits for this fill before it publishes."""
    if PDL:
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(W + o, tl.full([BLOCK], VALUE, tl.int64), mask=o < n)
