// The kernel that finishes the timer's L2 flush: it reads the flush buffer after the memset wrote it, so the
// timed launch finds L2 holding clean lines it does not need, not dirty ones it must write back.
//
// Why (results/flush-probe-h200/): after the memset alone a read-only stream of 134 MB on an H200 took 43.5
// µs; after the memset and this read, 34.4 µs. Writing back up to one L2 of the memset's lines (60 MB there)
// was charged to whatever ran next, by how much it read: 9 µs to a decode GEMM, 3 µs to the copy it is judged
// against.
//
// PTX, loaded by the driver (cuModuleLoadData): no compiler at run time and no image per card. Every thread
// reads 16-byte words i, i+S, i+2S, i+3S (S: threads in the grid) per step, then one at a time; it XORs them
// and stores the result to word 0 only when it equals a constant that a memset of 32-bit words cannot produce
// (each word's four lanes cancel), so the loads stay and nothing is written. Plain header text so that
// tests/downstream/gpu_check times launches the same way; tests/test_l2_clean_ptx.cpp assembles it.
#pragma once

namespace tunefuzz::device {

inline constexpr const char* kL2CleanEntry = "tf_l2_clean";
/// Its launch: this many CTAs per SM, of this many threads.
inline constexpr unsigned kL2CleanBlocksPerSm = 4, kL2CleanThreads = 256;

inline constexpr const char* kL2CleanPtx = R"ptx(
.version 7.0
.target sm_75
.address_size 64

// tf_l2_clean(data, words): reads `words` 16-byte words from `data`.
.visible .entry tf_l2_clean(
    .param .u64 tf_l2_clean_data,
    .param .u64 tf_l2_clean_words)
{
    .reg .pred  %p<3>;
    .reg .b32   %r<22>;
    .reg .b64   %rd<10>;

    ld.param.u64        %rd1, [tf_l2_clean_data];
    ld.param.u64        %rd2, [tf_l2_clean_words];
    cvta.to.global.u64  %rd1, %rd1;
    mov.u32             %r1, %ctaid.x;
    mov.u32             %r2, %ntid.x;
    mov.u32             %r3, %tid.x;
    mov.u32             %r4, %nctaid.x;
    cvt.u64.u32         %rd3, %r3;
    mad.wide.u32        %rd3, %r1, %r2, %rd3;      // i, this thread's first word
    mul.wide.u32        %rd4, %r4, %r2;            // S
    shl.b64             %rd5, %rd4, 4;             // S words in bytes
    mul.lo.u64          %rd9, %rd4, 3;             // 3S
    mov.u32             %r5, 0;

FOUR:                                              // words i .. i+3S while the last is in the buffer
    add.u64             %rd7, %rd3, %rd9;
    setp.ge.u64         %p1, %rd7, %rd2;
    @%p1 bra            ONE;
    shl.b64             %rd6, %rd3, 4;
    add.u64             %rd6, %rd1, %rd6;
    ld.global.v4.u32    {%r6, %r7, %r8, %r9}, [%rd6];
    add.u64             %rd6, %rd6, %rd5;
    ld.global.v4.u32    {%r10, %r11, %r12, %r13}, [%rd6];
    add.u64             %rd6, %rd6, %rd5;
    ld.global.v4.u32    {%r14, %r15, %r16, %r17}, [%rd6];
    add.u64             %rd6, %rd6, %rd5;
    ld.global.v4.u32    {%r18, %r19, %r20, %r21}, [%rd6];
    xor.b32             %r6, %r6, %r7;
    xor.b32             %r8, %r8, %r9;
    xor.b32             %r10, %r10, %r11;
    xor.b32             %r12, %r12, %r13;
    xor.b32             %r14, %r14, %r15;
    xor.b32             %r16, %r16, %r17;
    xor.b32             %r18, %r18, %r19;
    xor.b32             %r20, %r20, %r21;
    xor.b32             %r6, %r6, %r8;
    xor.b32             %r10, %r10, %r12;
    xor.b32             %r14, %r14, %r16;
    xor.b32             %r18, %r18, %r20;
    xor.b32             %r6, %r6, %r10;
    xor.b32             %r14, %r14, %r18;
    xor.b32             %r6, %r6, %r14;
    xor.b32             %r5, %r5, %r6;
    add.u64             %rd3, %rd7, %rd4;          // i += 4S
    bra.uni             FOUR;

ONE:                                               // the rest, one word at a time
    setp.ge.u64         %p1, %rd3, %rd2;
    @%p1 bra            DONE;
    shl.b64             %rd6, %rd3, 4;
    add.u64             %rd6, %rd1, %rd6;
    ld.global.v4.u32    {%r6, %r7, %r8, %r9}, [%rd6];
    xor.b32             %r6, %r6, %r7;
    xor.b32             %r8, %r8, %r9;
    xor.b32             %r6, %r6, %r8;
    xor.b32             %r5, %r5, %r6;
    add.u64             %rd3, %rd3, %rd4;
    bra.uni             ONE;

DONE:
    setp.ne.u32         %p2, %r5, -1640531527;    // 0x9e3779b9
    @%p2 bra            END;
    st.global.u32       [%rd1], %r5;
END:
    ret;
}
)ptx";

}  // namespace tunefuzz::device
