/*
 * CPU feature detection for Native Image's start-up check on x86-64: the image was compiled for
 * a set of features (a byte mask laid out as CPUFeatures), and refuses to run where one is
 * missing, instead of dying on an illegal instruction later. Bits as the Intel and AMD manuals
 * give them; AVX and AVX-512 count only where the OS saves their registers (XCR0).
 */
#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "amd64cpufeatures.h"

#define BIT(reg, n) ((char) (((reg) >> (n)) & 1u))

static void cpuid_count(unsigned leaf, unsigned sub, unsigned r[4]) {
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}

static unsigned long long xgetbv0(void) {
    unsigned eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long) edx << 32) | eax;
}

void determineCPUFeatures(CPUFeatures *f) {
    memset(f, 0, sizeof(*f));
    unsigned r[4];
    unsigned max_leaf = __get_cpuid_max(0, 0);
    unsigned max_ext = __get_cpuid_max(0x80000000u, 0);
    if (max_leaf < 1) {
        return;
    }
    cpuid_count(1, 0, r);
    unsigned ecx1 = r[2], edx1 = r[3];
    f->fTSC = BIT(edx1, 4);
    f->fCX8 = BIT(edx1, 8);
    f->fCMOV = BIT(edx1, 15);
    f->fFLUSH = BIT(edx1, 19);
    f->fMMX = BIT(edx1, 23);
    f->fFXSR = BIT(edx1, 24);
    f->fSSE = BIT(edx1, 25);
    f->fSSE2 = BIT(edx1, 26);
    f->fHT = BIT(edx1, 28);
    f->fSSE3 = BIT(ecx1, 0);
    f->fCLMUL = BIT(ecx1, 1);
    f->fSSSE3 = BIT(ecx1, 9);
    f->fSSE4_1 = BIT(ecx1, 19);
    f->fSSE4_2 = BIT(ecx1, 20);
    f->fPOPCNT = BIT(ecx1, 23);
    f->fAES = BIT(ecx1, 25);
    f->fHV = BIT(ecx1, 31);

    /* AVX state (XMM and YMM) and AVX-512 state (opmask, ZMM) must be enabled by the OS. */
    int os_avx = 0, os_avx512 = 0, os_apx = 0;
    if (BIT(ecx1, 27)) { /* OSXSAVE */
        unsigned long long xcr0 = xgetbv0();
        os_avx = (xcr0 & 0x6) == 0x6;
        os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;
        os_apx = (xcr0 >> 19) & 1;
    }
    if (os_avx) {
        f->fAVX = BIT(ecx1, 28);
        f->fFMA = BIT(ecx1, 12);
        f->fF16C = BIT(ecx1, 29);
        f->fVZEROUPPER = f->fAVX;
    }

    if (max_leaf >= 7) {
        cpuid_count(7, 0, r);
        unsigned ebx7 = r[1], ecx7 = r[2], edx7 = r[3], max_sub7 = r[0];
        f->fBMI1 = BIT(ebx7, 3);
        f->fBMI2 = BIT(ebx7, 8);
        f->fERMS = BIT(ebx7, 9);
        f->fRTM = BIT(ebx7, 11);
        f->fADX = BIT(ebx7, 19);
        f->fFLUSHOPT = BIT(ebx7, 23);
        f->fCLWB = BIT(ebx7, 24);
        f->fSHA = BIT(ebx7, 29);
        f->fPKU = BIT(ecx7, 3);
        f->fOSPKE = BIT(ecx7, 4);
        f->fCET_SS = BIT(ecx7, 7);
        f->fRDPID = BIT(ecx7, 22);
        f->fFSRM = BIT(edx7, 4);
        f->fSERIALIZE = BIT(edx7, 14);
        f->fCET_IBT = BIT(edx7, 20);
        if (os_avx) {
            f->fAVX2 = BIT(ebx7, 5);
            f->fGFNI = BIT(ecx7, 8);
        }
        if (os_avx512) {
            f->fAVX512F = BIT(ebx7, 16);
            f->fAVX512DQ = BIT(ebx7, 17);
            f->fAVX512_IFMA = BIT(ebx7, 21);
            f->fAVX512PF = BIT(ebx7, 26);
            f->fAVX512ER = BIT(ebx7, 27);
            f->fAVX512CD = BIT(ebx7, 28);
            f->fAVX512BW = BIT(ebx7, 30);
            f->fAVX512VL = BIT(ebx7, 31);
            f->fAVX512_VBMI = BIT(ecx7, 1);
            f->fAVX512_VBMI2 = BIT(ecx7, 6);
            f->fAVX512_VAES = BIT(ecx7, 9);
            f->fAVX512_VPCLMULQDQ = BIT(ecx7, 10);
            f->fAVX512_VNNI = BIT(ecx7, 11);
            f->fAVX512_BITALG = BIT(ecx7, 12);
            f->fAVX512_VPOPCNTDQ = BIT(ecx7, 14);
            f->fAVX512_FP16 = BIT(edx7, 23);
        }
        if (max_sub7 >= 1) {
            cpuid_count(7, 1, r);
            if (os_avx) {
                f->fSHA512 = BIT(r[0], 0);
                f->fAVX_IFMA = BIT(r[0], 23);
            }
            f->fAPX_F = (char) (os_apx && BIT(r[3], 21));
            if (os_avx512 && BIT(r[3], 19) && max_leaf >= 0x24) {
                cpuid_count(0x24, 0, r);
                unsigned version = r[1] & 0xff;
                f->fAVX10_1 = version >= 1;
                f->fAVX10_2 = version >= 2;
            }
        }
    }

    if (max_ext >= 0x80000001u) {
        cpuid_count(0x80000001u, 0, r);
        f->fLZCNT = BIT(r[2], 5);
        f->fSSE4A = BIT(r[2], 6);
        f->fAMD_3DNOW_PREFETCH = BIT(r[2], 8);
        f->fRDTSCP = BIT(r[3], 27);
    }
    if (max_ext >= 0x80000007u) {
        cpuid_count(0x80000007u, 0, r);
        f->fTSCINV_BIT = BIT(r[3], 8);
        f->fTSCINV = f->fTSCINV_BIT;
    }
}

/*
 * 0 when this machine has every feature the image was built to use, 1 otherwise. The builder
 * writes the mask with one byte a feature in CPUFeatures' layout: 0xFE where the image needs
 * the feature, 0xFF where it does not; so a feature byte of 1 ORed with the mask gives 0xFF.
 */
int checkCPUFeatures(const unsigned char *mask) {
    CPUFeatures present;
    determineCPUFeatures(&present);
    const unsigned char *have = (const unsigned char *) &present;
    for (size_t i = 0; i < sizeof(CPUFeatures); i++) {
        if ((unsigned char) (have[i] | mask[i]) != 0xFF) {
            return 1;
        }
    }
    return 0;
}

int checkCPUFeaturesOrExit(const unsigned char *mask, const char *message) {
    if (checkCPUFeatures(mask) != 0) {
        fputs(message, stderr);
        fputc('\n', stderr);
        exit(1);
    }
    return 0;
}
