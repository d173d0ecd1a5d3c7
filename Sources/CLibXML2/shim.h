#include <libxml/xmlversion.h>
/* Debian's libxml2 is built with ICU, so encoding.h would include ICU's headers, which
 * clash with the copy Swift's Foundation carries. Nothing here uses the ICU fields of
 * xmlCharEncodingHandler (only pointers to it pass through), so leave them out. */
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
