/* treport.h - what the report tests share: each test starts with no error
 * and ends with the allocator where it began (no injected failure left).
 *
 *   TestSuite(report, .init = tr_setup, .fini = tr_teardown);
 *   cr_assert_eq(al_live_bytes(), tr_base_bytes(), ...);   // mid-test
 */
#ifndef FAKEGC_TESTS_REPORT_TREPORT_H
#define FAKEGC_TESTS_REPORT_TREPORT_H

void tr_setup(void);
void tr_teardown(void);
/* The allocator's live bytes when the test began. */
unsigned long long tr_base_bytes(void);

#endif
