// refbench TYPE ...: the reference's quantization speed on this machine, measured as
// ../shared/bench measured it: one thread, one ggml_quantize_chunk call over 64 x 4096 weights
// (normal, sigma 0.02, rounded to bf16) with an importance vector, in MB/s of bf16 input (2 bytes
// per weight), the best of REPS calls (default 5) after one warm-up call that builds the type's
// tables. It prints the table's TSV (type, imatrix, MB/s) for internal/benchratio's -ref; with
// METRIC=cpu the speed is taken from the thread's CPU time instead of the wall clock, to compare
// with the benchmarks' cpu-MB/s. The reference's own messages go to stderr.
#include "ggml.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t state = 88172645463325252ull;

static double uniform(void) {
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;
    return (state >> 11) * (1.0 / 9007199254740992.0);
}

static double normal(void) {
    double u = uniform(), v = uniform();
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static double seconds(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
    enum { ROWS = 64, COLS = 4096 };
    int reps = getenv("REPS") ? atoi(getenv("REPS")) : 5;
    int cpu = getenv("METRIC") && !strcmp(getenv("METRIC"), "cpu");
    FILE *out = fdopen(dup(1), "w");
    dup2(2, 1);
    struct ggml_init_params ip = { 1024 * 1024, NULL, false };
    ggml_init(ip);
    float *x = malloc(sizeof(float) * ROWS * COLS), *im = malloc(sizeof(float) * COLS);
    for (int i = 0; i < ROWS * COLS; i++) {
        float f = (float)(0.02 * normal());
        uint32_t b;
        memcpy(&b, &f, 4);
        b = (b + 0x7fff + ((b >> 16) & 1)) & 0xffff0000u;
        memcpy(&x[i], &b, 4);
    }
    for (int i = 0; i < COLS; i++) im[i] = (float)(-log(1 - uniform()));
    void *y = malloc((size_t)ROWS * COLS * 4 + 4096);
    struct quantize_user_data ud = { false, false }; // llama-quantize's defaults
    fprintf(out, "# type\timatrix\t%s (bf16 input bytes, 1 thread, best of %d)\n", cpu ? "cpu_MB_per_s" : "MB_per_s", reps);
    for (int a = 1; a < argc; a++) {
        // noimat/TYPE: without the importance vector (the ARM q4_0 repacks stop on one), named as
        // the benchmarks name such runs.
        const char *name = argv[a];
        const float *w = im;
        if (!strncmp(name, "noimat/", 7)) { name += 7; w = NULL; }
        int t = 0;
        while (t < GGML_TYPE_COUNT && !(ggml_type_name((enum ggml_type)t) && !strcmp(ggml_type_name((enum ggml_type)t), name))) t++;
        if (t == GGML_TYPE_COUNT || COLS % ggml_blck_size((enum ggml_type)t)) {
            fprintf(stderr, "refbench: no type %s for rows of %d\n", argv[a], COLS);
            return 2;
        }
        ggml_quantize_chunk((enum ggml_type)t, x, y, 0, ROWS, COLS, w, &ud);
        double best = INFINITY;
        for (int r = 0; r < reps; r++) {
            clockid_t c = cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
            double t0 = seconds(c);
            ggml_quantize_chunk((enum ggml_type)t, x, y, 0, ROWS, COLS, w, &ud);
            double dt = seconds(c) - t0;
            if (dt < best) best = dt;
        }
        fprintf(out, "%s\t%d\t%.1f\n", argv[a], w != NULL, 2.0 * ROWS * COLS / 1e6 / best);
        fflush(out);
    }
    return 0;
}
