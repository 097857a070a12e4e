/* CPU features as Native Image's runtime check reads them: one byte a feature, 1 when present. */
#ifndef KDRA_RISCV64_CPUFEATURES_H
#define KDRA_RISCV64_CPUFEATURES_H
typedef struct {
    char fI;
    char fM;
    char fA;
    char fF;
    char fD;
    char fC;
    char fV;
} CPUFeatures;
#endif
