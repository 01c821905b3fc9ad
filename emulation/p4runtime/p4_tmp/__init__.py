"""PI's ``p4.tmp`` package (``p4/tmp/p4config.proto``): the device-config wrapper of the
p4lang tutorials' ``p4runtime_lib``, installed as ``p4.tmp`` beside the ``p4runtime``
package (which lacks it) so that their scripts import it unchanged."""
