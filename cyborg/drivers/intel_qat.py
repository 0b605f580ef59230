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
functions, or the physical function itself while SR-IOV is off. QAT 4xxx
devices show which services their firmware runs (``qat/cfg_services``),
which become traits.
"""

from cyborg.common import placement_names
from cyborg.drivers import base
from cyborg.drivers import report

VENDOR_ID = '8086'
RESOURCE_CLASS = 'CUSTOM_QAT'

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
            functions = pf.virtfns or (pf.address,)
            deployable = report.deployable(
                pf.address, self.name, RESOURCE_CLASS, traits,
                [report.pci_handle(f) for f in functions])
            devices.append(report.device(
                'QAT', VENDOR_ID, 'Intel QAT %s' % model, pf.address,
                [deployable], std_board_info=report.std_board_info(pf)))
        return devices
