/* CPU features as Native Image's runtime check reads them: one byte a feature, 1 when present. */
#ifndef KDRA_AARCH64_CPUFEATURES_H
#define KDRA_AARCH64_CPUFEATURES_H
typedef struct {
    char fFP;
    char fASIMD;
    char fEVTSTRM;
    char fAES;
    char fPMULL;
    char fSHA1;
    char fSHA2;
    char fCRC32;
    char fLSE;
    char fDCPOP;
    char fSHA3;
    char fSHA512;
    char fSVE;
    char fSVE2;
    char fSTXR_PREFETCH;
    char fA53MAC;
    char fDMB_ATOMICS;
    char fPACA;
    char fSVEBITPERM;
    char fFPHP;
    char fASIMDHP;
} CPUFeatures;
#endif
