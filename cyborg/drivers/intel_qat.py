# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""Intel QuickAssist Technology (QAT) crypto and compression devices.

Each physical function is one device; instances get its SR-IOV virtual
functions (VFs), or the physical function itself while SR-IOV is off. Each
VF is a deployable of its own, as in the replaced service, unless ``[agent]
group_virtual_functions`` makes the VFs the attach handles of one
deployable. QAT 4xxx devices show which services their firmware runs
(``qat/cfg_services``), which become traits.
"""

from cyborg.common import placement_names
import cyborg.conf
from cyborg.drivers import base
from cyborg.drivers import cyborg17
from cyborg.drivers import report

CONF = cyborg.conf.CONF

VENDOR_ID = '8086'
RESOURCE_CLASS = 'CUSTOM_QAT'
#: The ``driver_name`` of the replaced service.
CYBORG17_DRIVER_NAME = 'intel'

#: Physical function product ids and their model names.
MODELS = {
    '0435': 'DH895XCC',
    '37c8': 'C62X',
    '19e2': 'C3XXX',
    '18ee': 'C4XXX',
    '4940': '4XXX',
    '4942': '401XX',
    '4944': '402XX',
}


class IntelQatDriver(base.Driver):
    """QAT physical functions, their VFs as attach handles."""

    name = 'intel_qat_driver'
    pci_ids = frozenset((VENDOR_ID, product) for product in MODELS)

    def reported_name(self, vendor_id):
        return CYBORG17_DRIVER_NAME

    def discover(self, pci_devices):
        devices = []
        for pf in pci_devices.values():
            if (pf.vendor_id != VENDOR_ID or pf.physfn is not None or
                    pf.product_id not in MODELS):
                continue
            model = MODELS[pf.product_id]
            traits = ['CUSTOM_QAT', placement_names.custom_name('QAT', model)]
            services = pf.read('qat/cfg_services') or ''
            traits.extend(placement_names.custom_name('QAT_SERVICE', service)
                          for service in services.split(';') if service)
            if not pf.virtfns or CONF.agent.group_virtual_functions:
                groups = {pf.address: pf.virtfns or (pf.address,)}
            else:
                groups = {vf: (vf,) for vf in pf.virtfns}
            deployables = [
                report.deployable(
                    name, self.reported_name(pf.vendor_id), RESOURCE_CLASS,
                    traits, [report.pci_handle(f) for f in functions])
                for name, functions in groups.items()]
            devices.append(report.device(
                'QAT', cyborg17.hex_id(VENDOR_ID), 'Intel QAT %s' % model,
                pf.address, deployables,
                std_board_info=report.std_board_info(pf)))
        return devices
