/* Many distinct functions (256, defined by a macro): f_K is called
 * (K % 5) + 1 times by main through a generated call list; f_K for K >= 250
 * is never called (count 0). */
#include <stdio.h>

/* expect: main 1 */
/* expect: f_0 1 */
/* expect: f_1 2 */
/* expect: f_2 3 */
/* expect: f_3 4 */
/* expect: f_4 5 */
/* expect: f_5 1 */
/* expect: f_6 2 */
/* expect: f_7 3 */
/* expect: f_8 4 */
/* expect: f_9 5 */
/* expect: f_10 1 */
/* expect: f_11 2 */
/* expect: f_12 3 */
/* expect: f_13 4 */
/* expect: f_14 5 */
/* expect: f_15 1 */
/* expect: f_16 2 */
/* expect: f_17 3 */
/* expect: f_18 4 */
/* expect: f_19 5 */
/* expect: f_20 1 */
/* expect: f_21 2 */
/* expect: f_22 3 */
/* expect: f_23 4 */
/* expect: f_24 5 */
/* expect: f_25 1 */
/* expect: f_26 2 */
/* expect: f_27 3 */
/* expect: f_28 4 */
/* expect: f_29 5 */
/* expect: f_30 1 */
/* expect: f_31 2 */
/* expect: f_32 3 */
/* expect: f_33 4 */
/* expect: f_34 5 */
/* expect: f_35 1 */
/* expect: f_36 2 */
/* expect: f_37 3 */
/* expect: f_38 4 */
/* expect: f_39 5 */
/* expect: f_40 1 */
/* expect: f_41 2 */
/* expect: f_42 3 */
/* expect: f_43 4 */
/* expect: f_44 5 */
/* expect: f_45 1 */
/* expect: f_46 2 */
/* expect: f_47 3 */
/* expect: f_48 4 */
/* expect: f_49 5 */
/* expect: f_50 1 */
/* expect: f_51 2 */
/* expect: f_52 3 */
/* expect: f_53 4 */
/* expect: f_54 5 */
/* expect: f_55 1 */
/* expect: f_56 2 */
/* expect: f_57 3 */
/* expect: f_58 4 */
/* expect: f_59 5 */
/* expect: f_60 1 */
/* expect: f_61 2 */
/* expect: f_62 3 */
/* expect: f_63 4 */
/* expect: f_64 5 */
/* expect: f_65 1 */
/* expect: f_66 2 */
/* expect: f_67 3 */
/* expect: f_68 4 */
/* expect: f_69 5 */
/* expect: f_70 1 */
/* expect: f_71 2 */
/* expect: f_72 3 */
/* expect: f_73 4 */
/* expect: f_74 5 */
/* expect: f_75 1 */
/* expect: f_76 2 */
/* expect: f_77 3 */
/* expect: f_78 4 */
/* expect: f_79 5 */
/* expect: f_80 1 */
/* expect: f_81 2 */
/* expect: f_82 3 */
/* expect: f_83 4 */
/* expect: f_84 5 */
/* expect: f_85 1 */
/* expect: f_86 2 */
/* expect: f_87 3 */
/* expect: f_88 4 */
/* expect: f_89 5 */
/* expect: f_90 1 */
/* expect: f_91 2 */
/* expect: f_92 3 */
/* expect: f_93 4 */
/* expect: f_94 5 */
/* expect: f_95 1 */
/* expect: f_96 2 */
/* expect: f_97 3 */
/* expect: f_98 4 */
/* expect: f_99 5 */
/* expect: f_100 1 */
/* expect: f_101 2 */
/* expect: f_102 3 */
/* expect: f_103 4 */
/* expect: f_104 5 */
/* expect: f_105 1 */
/* expect: f_106 2 */
/* expect: f_107 3 */
/* expect: f_108 4 */
/* expect: f_109 5 */
/* expect: f_110 1 */
/* expect: f_111 2 */
/* expect: f_112 3 */
/* expect: f_113 4 */
/* expect: f_114 5 */
/* expect: f_115 1 */
/* expect: f_116 2 */
/* expect: f_117 3 */
/* expect: f_118 4 */
/* expect: f_119 5 */
/* expect: f_120 1 */
/* expect: f_121 2 */
/* expect: f_122 3 */
/* expect: f_123 4 */
/* expect: f_124 5 */
/* expect: f_125 1 */
/* expect: f_126 2 */
/* expect: f_127 3 */
/* expect: f_128 4 */
/* expect: f_129 5 */
/* expect: f_130 1 */
/* expect: f_131 2 */
/* expect: f_132 3 */
/* expect: f_133 4 */
/* expect: f_134 5 */
/* expect: f_135 1 */
/* expect: f_136 2 */
/* expect: f_137 3 */
/* expect: f_138 4 */
/* expect: f_139 5 */
/* expect: f_140 1 */
/* expect: f_141 2 */
/* expect: f_142 3 */
/* expect: f_143 4 */
/* expect: f_144 5 */
/* expect: f_145 1 */
/* expect: f_146 2 */
/* expect: f_147 3 */
/* expect: f_148 4 */
/* expect: f_149 5 */
/* expect: f_150 1 */
/* expect: f_151 2 */
/* expect: f_152 3 */
/* expect: f_153 4 */
/* expect: f_154 5 */
/* expect: f_155 1 */
/* expect: f_156 2 */
/* expect: f_157 3 */
/* expect: f_158 4 */
/* expect: f_159 5 */
/* expect: f_160 1 */
/* expect: f_161 2 */
/* expect: f_162 3 */
/* expect: f_163 4 */
/* expect: f_164 5 */
/* expect: f_165 1 */
/* expect: f_166 2 */
/* expect: f_167 3 */
/* expect: f_168 4 */
/* expect: f_169 5 */
/* expect: f_170 1 */
/* expect: f_171 2 */
/* expect: f_172 3 */
/* expect: f_173 4 */
/* expect: f_174 5 */
/* expect: f_175 1 */
/* expect: f_176 2 */
/* expect: f_177 3 */
/* expect: f_178 4 */
/* expect: f_179 5 */
/* expect: f_180 1 */
/* expect: f_181 2 */
/* expect: f_182 3 */
/* expect: f_183 4 */
/* expect: f_184 5 */
/* expect: f_185 1 */
/* expect: f_186 2 */
/* expect: f_187 3 */
/* expect: f_188 4 */
/* expect: f_189 5 */
/* expect: f_190 1 */
/* expect: f_191 2 */
/* expect: f_192 3 */
/* expect: f_193 4 */
/* expect: f_194 5 */
/* expect: f_195 1 */
/* expect: f_196 2 */
/* expect: f_197 3 */
/* expect: f_198 4 */
/* expect: f_199 5 */
/* expect: f_200 1 */
/* expect: f_201 2 */
/* expect: f_202 3 */
/* expect: f_203 4 */
/* expect: f_204 5 */
/* expect: f_205 1 */
/* expect: f_206 2 */
/* expect: f_207 3 */
/* expect: f_208 4 */
/* expect: f_209 5 */
/* expect: f_210 1 */
/* expect: f_211 2 */
/* expect: f_212 3 */
/* expect: f_213 4 */
/* expect: f_214 5 */
/* expect: f_215 1 */
/* expect: f_216 2 */
/* expect: f_217 3 */
/* expect: f_218 4 */
/* expect: f_219 5 */
/* expect: f_220 1 */
/* expect: f_221 2 */
/* expect: f_222 3 */
/* expect: f_223 4 */
/* expect: f_224 5 */
/* expect: f_225 1 */
/* expect: f_226 2 */
/* expect: f_227 3 */
/* expect: f_228 4 */
/* expect: f_229 5 */
/* expect: f_230 1 */
/* expect: f_231 2 */
/* expect: f_232 3 */
/* expect: f_233 4 */
/* expect: f_234 5 */
/* expect: f_235 1 */
/* expect: f_236 2 */
/* expect: f_237 3 */
/* expect: f_238 4 */
/* expect: f_239 5 */
/* expect: f_240 1 */
/* expect: f_241 2 */
/* expect: f_242 3 */
/* expect: f_243 4 */
/* expect: f_244 5 */
/* expect: f_245 1 */
/* expect: f_246 2 */
/* expect: f_247 3 */
/* expect: f_248 4 */
/* expect: f_249 5 */
/* expect: f_250 0 */
/* expect: f_251 0 */
/* expect: f_252 0 */
/* expect: f_253 0 */
/* expect: f_254 0 */
/* expect: f_255 0 */

volatile unsigned long acc;
#define DEF(K) __attribute__((noipa)) void f_##K(void) { acc = acc * 33 + K; }
#define DEF10(T) DEF(T##0) DEF(T##1) DEF(T##2) DEF(T##3) DEF(T##4) \
                 DEF(T##5) DEF(T##6) DEF(T##7) DEF(T##8) DEF(T##9)
DEF(0) DEF(1) DEF(2) DEF(3) DEF(4) DEF(5) DEF(6) DEF(7) DEF(8) DEF(9)
DEF10(1) DEF10(2) DEF10(3) DEF10(4) DEF10(5) DEF10(6) DEF10(7) DEF10(8) DEF10(9) DEF10(10) DEF10(11) DEF10(12) DEF10(13) DEF10(14) DEF10(15) DEF10(16) DEF10(17) DEF10(18) DEF10(19) DEF10(20) DEF10(21) DEF10(22) DEF10(23) DEF10(24)
DEF(250) DEF(251) DEF(252) DEF(253) DEF(254) DEF(255)

#define CALL(K) for (int r = 0; r < (K) % 5 + 1; r++) f_##K();
#define CALL10(T) CALL(T##0) CALL(T##1) CALL(T##2) CALL(T##3) CALL(T##4) \
                  CALL(T##5) CALL(T##6) CALL(T##7) CALL(T##8) CALL(T##9)

int main(void)
{
    CALL(0) CALL(1) CALL(2) CALL(3) CALL(4) CALL(5) CALL(6) CALL(7) CALL(8) CALL(9)
    CALL10(1)
    CALL10(2)
    CALL10(3)
    CALL10(4)
    CALL10(5)
    CALL10(6)
    CALL10(7)
    CALL10(8)
    CALL10(9)
    CALL10(10)
    CALL10(11)
    CALL10(12)
    CALL10(13)
    CALL10(14)
    CALL10(15)
    CALL10(16)
    CALL10(17)
    CALL10(18)
    CALL10(19)
    CALL10(20)
    CALL10(21)
    CALL10(22)
    CALL10(23)
    CALL10(24)
    printf("acc=%lu\n", (unsigned long)acc);
    return 0;
}
