"""The pinned content of the templates' modules (:mod:`.templates`), per upstream version.

sha256 (hex) of each file as its author writes it, with where it was collected (the first
and last release collected with that content, and Debian's releases that ship it): the
setuptools wheels on PyPI (49.6 to 84.2) and Debian 12's, 13's and sid's python3-setuptools
(``_distutils_hack/__init__.py`` and ``override.py``); the editable finder setuptools 64+
generates (:func:`.templates.masked_form` of ``_FINDER_TEMPLATE`` rendered, sha256 of the
form); virtualenv's ``_virtualenv.py`` from its wheels on PyPI (20.0 to 21.15: the file is
copied as it is), and uv's copy, from the venvs each uv release on PyPI made (0.4 to 0.13,
one release a minor version); coverage.py's pure-Python content (:data:`COVERAGE`),
``editables``' (:data:`EDITABLES`), pytest-cov's ``.pth`` with the modules its line runs
(:data:`PYTEST_COV`), future-fstrings' ``.pth`` with its module (:data:`FUTURE_FSTRINGS`).
A version missing here makes its files plain code, judged as any code is, never a wrong
excuse.  Imports nothing.
"""

#: ``_distutils_hack/__init__.py`` and ``override.py``: setuptools versions, Debian's.
DISTUTILS_HACK = {
    "870c6f4869d409d7434c7ef7b99175568095b5541ac621538e5d8145fd01194f":
        "setuptools 49.6.0 (__init__.py)",
    "12efecf8d17a5486780aa774b5b6c0e70b56932d8864f35df1eb7a18bb759b3a":
        "setuptools 49.6.0 .. 84.2.1; Debian 12, sid, 13 (override.py)",
    "c05b8045c9a51ed915db41df44195068c3d8ee1431f93104b670695decac8b02":
        "setuptools 50.3.2 .. 53.0.0 (__init__.py)",
    "322f93bf23a7b8ccd421cfeeb68129e66dccfc363a40b2d2917aa0e9ef30848f":
        "setuptools 56.0.0 (__init__.py)",
    "5f7454880e8a04fa0499ca3f0a3002ca5b7241b15119552965101b4a43c6c0cb":
        "setuptools 57.5.0 .. 58.1.0 (__init__.py)",
    "4c2531daa12158dcabb8bce3e03386640407dfd866d9f27fc0377dd2894d3a6a":
        "setuptools 59.6.0 (__init__.py)",
    "600ff3472bad5c46ee6438a9516e844282c2e8fb946ef62c1b2060f9a2fe3c2b":
        "setuptools 60.2.0 (__init__.py)",
    "026d425507ed93f30700abdf25056940cc15c7796b01b2863e1288520c1ac036":
        "setuptools 60.10.0 .. 61.3.1 (__init__.py)",
    "4d27a48545b57dd137ae35376fcf326d2064271084a487960686f8704b94de4a":
        "setuptools 62.6.0 .. 67.8.0; Debian 12 (__init__.py)",
    "46849a60a7cc85189cf6b5ac62b3f135004862ce6a96540a81c95ef6fbc4dc3e":
        "setuptools 68.0.0 .. 69.0.3 (__init__.py)",
    "4bf5b0bc8f8af7ce7096e96f7167cf4f776f2cc0983f5c8f876ca780b3a67781":
        "setuptools 69.1.1 .. 70.2.0 (__init__.py)",
    "1542e30b6d07156f447ab4bcaec4a3a330feb93167d5dcaf548f6d6b2cdb852c":
        "setuptools 70.3.0 .. 72.2.0 (__init__.py)",
    "9b737c2ccce2dad2e896acfb6285c708419121078c00231a5439a7647cdd72e4":
        "setuptools 73.0.1 (__init__.py)",
    "a325c4f62f92a19daaa558088e4339afd78e14df40c20a7d51c9dc3a714dc237":
        "setuptools 74.0.0 .. 75.3.4 (__init__.py)",
    "df81e6bcba34ee3e3952f776551fb669143b9490fdd6c4caeb32609f97e985b4":
        "setuptools 75.5.0 .. 83.0.0; Debian 13 (__init__.py)",
    "ced72e54431ecf2d8d7dbd8a1e27724f1b171af3ca1503c304bf11c59a7fe861":
        "setuptools 84.0.0 .. 84.2.1; Debian sid (__init__.py)",
}

#: setuptools' editable finder, data masked: the setuptools versions generating it.
EDITABLE_FINDER = {
    "6cb96ae79ba11262857332706b95374a8f7342d97a63035bbc57ddb67a42a468":
        "setuptools 64.0.0 .. 65.0.0",
    "f5200d884fc056644a96cc1b133779b5f2dc18c32d2638d93faacfe9d6399d8f":
        "setuptools 65.1.1",
    "6f1c0980c541ff53ffc49bb968b9470f46c5f1b725b8f232ed4993652e5b1955":
        "setuptools 65.3.0 .. 68.0.0; Debian 12",
    "a36f36f63eac735996915dde448c20083aa56a1a6745bdcf9c23bcd7158e0978":
        "setuptools 68.1.2",
    "35f2332f130d93ed029a365168ccf6bf065547630c4804ac97bbcfe0414a1596":
        "setuptools 68.2.2 .. 69.5.1",
    "45ec6074bca99924c992e6882270ef0d6fbf68b46b2aad1beac12bfc9fb038ce":
        "setuptools 70.0.0 .. 70.3.0",
    "aadaf7237e6de1513a3f7f2bbda14cd0bf0e20ac6466f13f00e7638072311a2a":
        "setuptools 71.0.0 .. 84.2.1; Debian sid, 13",
}

#: virtualenv's ``_virtualenv.py``: the virtualenv versions shipping it.
VIRTUALENV = {
    "684b8c07932ba4a84ac2e5ae9afe49ef04e92bac3d8d4191d455cf09d093e5fc":
        "virtualenv 20.0.35 .. 20.12.1",
    "ce57d5e0d9b5d7356cb42da7450ba8f9359bdf693e335f4c921626943c77e64d":
        "virtualenv 20.13.4 .. 20.15.1",
    "c9199315871b11b12df226f890a38e66e63191e1adbfb11a66e6861151b33fca":
        "virtualenv 20.16.7 .. 20.21.1",
    "f4dfaeb9efc1614890cfa94ed15bbe9b2ee15fbe76d569ef5e435e93e4987dc7":
        "virtualenv 20.22.0",
    "119e4eb9c1a39e6ffd220840844bd326fa1bd3acf2f1c9fa0612949aedc228a5":
        "virtualenv 20.23.1",
    "0aeb86546345c1d0fada097536e35525714d5cdbcc2d8eb3f9912a955044fcff":
        "virtualenv 20.24.7",
    "0f20351ea7e90039c46d3fabdef991f28b1e3ff33eb13ee6f0d5cd21ea0e8b14":
        "virtualenv 20.25.3 .. 20.34.0",
    "bec6155ff7bfc88f8e79e481f27fd7ee0a3b40eeca9bfeb41f4c4b997b2f8100":
        "virtualenv 20.35.4 .. 20.36.1",
    "02943e192823d75212f206e1f2991ac572119882683a95dfbb7a1b913d7b14b5":
        "virtualenv 20.38.0 .. 21.0.0",
    "e8c426ce260f866254ff35cefedc8b3efbd6d1446d99d7a4cdeb0095f98a8b8f":
        "virtualenv 21.1.0 .. 21.3.3",
    "460589e83387d4dfe5fd84d41c5f6979599f5cd080983d73c832549161c80435":
        "virtualenv 21.4.3 .. 21.6.1",
    "0278334cdcfab4c746b4416fbd5c2b6e7da937c81e132397d62c361d404ebe0e":
        "virtualenv 21.7.16 .. 21.15.0",
    "cfe56cafbd68fd31a0e87100f111d7d2f6b7157241096500013c07e88d80a22f":
        "virtualenv 21.15.14",
}

#: uv's copy of it (``uv venv``; none on 3.10+ since 0.13): the uv versions writing it.
UV_VIRTUALENV = {
    "6cf30c56faf2a55228914dbbd17f8088ed371ebb08f5e7fa6fd931f913fcaf1d":
        "uv 0.4.30 .. 0.10.12",
    "cfb3db86aaa53bb62b5ff764970bec2d71c9228590a0ebec57f6ec926cc0bf1a":
        "uv 0.11.33 .. 0.13.9",
}


#: coverage.py's pure-Python content per release: sha256 over the sorted rows
#: ``"coverage/x.py sha256=<urlsafe b64, unpadded>\n"`` of each ``.py`` file under
#: ``coverage/`` (the rows a RECORD pip writes holds for them).  Collected from the wheels
#: on PyPI (the pure ``py3-none-any`` wheel from 7.6.11, before it a manylinux one: the
#: same ``.py`` files): ``pip download --no-deps --only-binary=:all: coverage==X``, then
#: those rows from each wheel's files, sorted, joined, hashed.  The last release of each
#: minor version from 6.5 to 7.9, every release from 7.10.  Debian's package: the rows
#: ``"coverage/x.py <md5 hex>\n"`` of its ``md5sums`` (``apt-get download``, Debian 12's).
COVERAGE = {
    "1ef7e32c7081933c88d34dc6b6e2f4661903cb35e28cafc4c46d6666c40c9fe6":
        "Debian 12 python3-coverage 6.5.0+dfsg1-2+b1 (its md5sums: path md5)",
    "6229b60d591a2df3045af91338557364337da13eb8f8bec30a9c69c125d125ac":
        "coverage 6.5.0",
    "7fa1584ba232618bdd8438151d7765438f94be1ae063dd04a2b39c2d3654b693":
        "coverage 7.0.5",
    "afa6df1f55939e95e26aafc80dd3303237f8b0bc1a68a006372c059f4728ce32":
        "coverage 7.1.0",
    "c8240502e680fd307f5c4ed9d2121f9c67552262379b1137abb6775cd6e05247":
        "coverage 7.2.7",
    "71ecf9c58a043eda3983def65a03d148fe0bc21c3997b65919c9e77df6758329":
        "coverage 7.3.4",
    "3f99a674056e21c6c34f5a065676d1ebe42c40d6ad38d739343fb386fe564a57":
        "coverage 7.4.4",
    "bb0576f16233427bf41daff6935237ca4f5359ebe54cfab25df7240113ab70e7":
        "coverage 7.5.4",
    "5e64ba625fcf7dd3943d73a29cfeb7495a1b4cf4f56cd25000f1179ee8e0013a":
        "coverage 7.6.10",
    "5178019087a2e7bc4a857788e545eb2824120e89ef0acd3cb4a867f43a1f6955":
        "coverage 7.6.11",
    "2377682a89bde84b0e86f225221d4b236bafd3043a5de084fa3d3b0848b46e18":
        "coverage 7.6.12",
    "9705e3be36950d3f559b03dc53d11fcc64c2874578201225a0fa5e1c97093a05":
        "coverage 7.7.0",
    "b447fe0301457ed4c2ab00219840c2fd6dee8617dd0a689914c48177f06b4f10":
        "coverage 7.7.1",
    "7a4ec5a20309f23ec6f92a89d44cbed681a81646720acfe2727374d6f1534ee6":
        "coverage 7.8.0",
    "77ad974f8897bd5750b9ef2c600d6e8f46076c556c7027acd98f48af1834a77d":
        "coverage 7.8.1",
    "0b04493ac7f41580862075a0fee5f34ae279b8c83d600f23b1e212c5a4fbca95":
        "coverage 7.8.2",
    "4505e39327bedd9df268a5e4c6dd9f034f59fb0be65f08e02e80441654a2d445":
        "coverage 7.9.0",
    "b317782e7e664d6e7fb661cba96f41c2d49b2026ad05747e879540f9c0c5f267":
        "coverage 7.9.1",
    "9189bb19bd2c1e55b6b08949da1d1e0fa4ab13dfd2c19dfc3e7c9f3c651e3795":
        "coverage 7.9.2",
    "2a3f79c225cb33f32406da2bc8b3d0da3e8dcb0b29e8739676689da929f96550":
        "coverage 7.10.0",
    "06fd7f26af77a6333b796773294c92a66bade09f1fc346001e045ce2bf34e812":
        "coverage 7.10.1",
    "435eda2c7beec1790607d5080e561521aff562ab56152d12409c4ec3e18d4473":
        "coverage 7.10.2",
    "34677ce19226e25df54c6d9f86a7452a68b75a074e770b3bd567d0cf86ea6bae":
        "coverage 7.10.3",
    "e21eda878329559bf8649b428448e8b8a6056d4e3dd436d82409e2b26917dc1d":
        "coverage 7.10.4",
    "93957f10f39b6b37a4a6bbd0a1c42fdc1b1939438007f52fdbedc4125d3e0ea3":
        "coverage 7.10.5",
    "2e2a4c581e5cb7ab019cea9a8379cac7a4cc4fa4d874d7368e7ff33559fa4117":
        "coverage 7.10.6",
    "ab25c2414911578b4a375fed31425b6243650e01b844d8ef0ba81e5c48647f8c":
        "coverage 7.10.7",
    "93feb57ecad6c8f83bcd121b9430b79f2eec52bd608f18f1c71bafb275f68be9":
        "coverage 7.11.0",
    "e8a3752673f4cc48b9de5196d4d2c58e196aba698eec55a833b1a956a7890f13":
        "coverage 7.11.1",
    "057092866672c442531e3edb82b79532ea97ee99279c8e40a160b8e2a496af8d":
        "coverage 7.11.2",
    "d699bdc0facc2d2e8ab93aa5c6e4c3897395699245336c4adcc5d858261a73dc":
        "coverage 7.11.3",
    "cbbc3deeae4887aa7efb06720be7641d36ed76e7e2bbe2d2f6de6c9d463932d5":
        "coverage 7.12.0",
    "56b344e8a4bec93f167d0586f431096d803291a53b0c5a1ac6ecc1ab58509b14":
        "coverage 7.13.0",
    "780bf5a774e762271d7502baaf4bff8361594ffabde99c7d5f2bded120305b4b":
        "coverage 7.13.1",
    "2bb9bfecd56948ba775b7a2170b79dd96f20cf5cd4e753b19a4173094a52e5f7":
        "coverage 7.13.2",
    "ee5d28799ed66e3274119ee36c65765b0ed2f653250a3fd86477941f7f58ba61":
        "coverage 7.13.3",
    "6d00ebbd059b78eaadf6332bfbaa25c714ace39d41858808c95a42b74229528c":
        "coverage 7.13.4",
    "0387b73a366d3a7a89a9179af81da07ff4e5edbd35d7be488304205e4382fc57":
        "coverage 7.13.5",
    "326831d253f5d572fa9ea053d2c271f7f99b6ac5b7b44f7cc214086e725f337d":
        "coverage 7.14.0",
    "642727c9039fdd8df8bc8e8f165f0c5292e759ac23468f2a01eab8bee5add716":
        "coverage 7.14.1",
    "9ada9ec35080c0a04ba80acfc24198062f8d97a4fc9e899f1fcc7378a01dd7fe":
        "coverage 7.14.2",
    "c579a318034fb3bd6a0c53485e26201f359c603d7d138a3fa061b6063fcba801":
        "coverage 7.14.3",
    "5f72ee8c07a764c22cda248398f634274f00e53497e8c326d69219e11d00bdc0":
        "coverage 7.15.0",
    "1bd79d1f2a37babb6be678ef87e89d904ea22693a1d9dddcbc26531e808b6bd3":
        "coverage 7.15.1",
    "d2c6d707dc92d221ea418bea4e15bc931598f6d1300b02579973b88fee763135":
        "coverage 7.15.2",
    "c6a0875ba63ea36f04a5f5f189e0aec6db57fc755b7d2d92c214151043cb9d61":
        "coverage 7.15.3",
    "9652af190807249da3bd22aeb7ee1d6572568c78626a5ba5b71c539890152db6":
        "coverage 7.15.4",
    "b6f0f07dd780f2b0680240ad1769bb7c9192413d00f27496aede93260f181547":
        "coverage 7.16.0",
    "a2af4ccbb35d5ca0aa5e668bc543a9947835d46775f3b16c3628788e9526105f":
        "coverage 7.16.1",
    "8474af9177dbd3f6d7bd02216d2172c562e25d55aec36ed8f31ff87be64f2706":
        "coverage 7.16.2",
    "642060b1045f54b939e8b706969389747d6db600e982f38502f2f22d3e9f0f23":
        "coverage 7.17.0",
    "0ed591b0d4ee07c10e65556d0451c1a14ec3d68273abd1423384cddd09a96e80":
        "coverage 7.17.1",
    "b2a9b338a373cce6f4a425f802546eb1e63b9383a966958a0a3564b3e01b68c4":
        "coverage 7.17.2",
    "7ee08bb346a18fc0290ad1ead534c3ebb40d78e5ec4d56420cda305d06a67e39":
        "coverage 7.17.3",
    "221e847173161da8c34a890a0fb479466e1e0c4a503054d6c98268b8a372a893":
        "coverage 7.17.4",
    "a92f0bf6387fb2b3a09643e6b39cd8ceb25eab6a44a4a6d0e370f58ae1bbea79":
        "coverage 7.17.5",
    "2d1dd5ea54303060d093cc1fc1eef6f6f54fca378a22f4d9b52723858b290862":
        "coverage 7.18.0",
}


#: coverage.py's C tracer (``coverage/tracer.cpython-*.so``) as a RECORD has it
#: (``sha256=`` urlsafe base64): an extension cannot be read, so only these, in a pinned
#: release (:data:`COVERAGE`) whose verified RECORD lists them, are known.  Collected from
#: coverage's manylinux wheels on PyPI (x86_64 and aarch64, CPython 3.10 to 3.14) for the
#: last release of each minor version from 7.10 and 7.10.6; another platform's tracer is
#: unread (``unread-startup-code``), never excused.
COVERAGE_TRACER = frozenset((
    # Debian 12 python3-coverage 6.5.0+dfsg1-2+b1, amd64 (its md5sums)
    "89d762309bc4416eb8d69ff515a13cb7",
    # coverage 7.10.6 and 7.10.7 (the same tracers)
    "sha256=-0aoc-J0KsYCEv5k0T9-Cf4OcGiOFfhD7bBMYIK_Kfk",
    "sha256=05ROdNhdNkNaFEZI2fQOiLkUB4qglEHx663QZSaZajY",
    "sha256=8Bi5Egbso_6LFv4qTlwg-Zgjnvx_9ECDp5qTixVNKXM",
    "sha256=F-tMj65bsjgKAQXj8fowVGT3lYUzlkpbM21vLBXoGIk",
    "sha256=T2h4wQS8OKmTB46apExO9xkB4ruQwAhWHU32lAl4TC0",
    "sha256=T3koGYm4MwshNU7XpGpxsBelWwq4g23-tNuDH79wqwQ",
    "sha256=UAZcvflhO0qpo5vYrmHvQN0nzzbKglZQEqOTmIWDrzQ",
    "sha256=gJPB-tS27wDH3fVEAorDm0Demczuvv0sE8xIImz6X_Q",
    "sha256=jYAWANFZT5S0HYeurmyKurpERmBVyCdrX8eM-ybAjN8",
    "sha256=zIbILPW-fkypkEUjlET3Fc_84SWtugNn7XnpivA0Os8",
    # coverage 7.11.3
    "sha256=I_HSP6YGMBHmO3o5EFZ219xU70j8jb692Azgc4BOyhc",
    "sha256=QhgHUH3WlxA5s_Bt1itEr9ECjSn-RgJBwa17u9d7tVE",
    "sha256=_VhSumlIVPf4A_Br3bPSyfpOeWl7PtfgrLNFWmBHSIs",
    "sha256=c-WzBMl8koEIhlFYJyUBC3b4PnB6Wl_lAgcgbLrBnSg",
    "sha256=etf6pkc6DrcN95vSACOF4MRF-_WlwWw_lsY5sA8L5-Q",
    "sha256=fs_06e3APOGYg1-pVUHOzLlxjmR4vCmtQ0LF9bDZGJk",
    "sha256=kARJtkVmgONbU2jofjwICChabzz3Emnbw7wZGcmbQ2E",
    "sha256=m5dQIPLfMXAiIyqO39hWRu82C-Jyd3sux-R_wz2CyB4",
    "sha256=wMEqMZg0R2Dh0FIyep-7QsoZ50CwQ_FKqB_mguHr1hc",
    "sha256=xcC5xxE4U_TJtE3xzvSRUNFxUKge_OxeYJrfDPNnqIs",
    # coverage 7.12.0 (8 listed above too)
    "sha256=_MTUmKHDrcHD6W6KSadxeNAl49skL2DwidmoUsNtgvc",
    "sha256=hs5EPqnuvBX4MGdC6fksmKNNp-3OEJY2WEvi95x0lBs",
    # coverage 7.13.5
    "sha256=104_hLmCnsPuWscRRwe08XzWxGAiPSAbKfCVRkzIzP8",
    "sha256=2UrlbKOLFMChRxXqGI7MHwprnizuZXTvYFmbXeRhsjQ",
    "sha256=3MR9SDY_o0cEf4cCu7hkIWm5xlWsMUMplGF7qq2DD50",
    "sha256=JN27zXeFP-eXOJfv7BtLmpiATjA92LnZDGAxhby7rVA",
    "sha256=VUgP09ZpYnlfQwJZE988yhIv2UIq9WLGyDm2MREeR2w",
    "sha256=_x2DU8Jiu0hVICrfA5dYUnjNxN_QGHGDp39pqYwMzsk",
    "sha256=aXJV69FqwF4j4wgeKJSEsvItUMYiU5paxRBGlb-_-TY",
    "sha256=h-9nvGI3XyKnycy1S32Ee4n_p5vrao0WQh6wogNbQeU",
    "sha256=tHqGeMWQtuJUZTKt9PgtgkgrY2FUoV6uCwkbJ2qSdcY",
    "sha256=wNclLbubRuYq7ebuOBCPiFM90Nje_NDvUHQ4m_kVoo0",
    # coverage 7.14.3
    "sha256=25L0kppp4LmzB7tkcPJb3Y_WeUXSBLKuqpKUZ0dSP7I",
    "sha256=ByIAhHn9lLLeG2H9TvkJj2f3qPGzbREpIxslzsJxoSQ",
    "sha256=OOfd8UB-ETvn69COxa8ETx8_liAVMc4iw0CjAEKBUEQ",
    "sha256=T8P96HhWydCwLKah0aqwoLDzNE6SyIdIJ0vIPO7b9ZE",
    "sha256=XJiNJ9p9S9pWPxeypWrEdio5HIYU94CJ-28tfCTxJJs",
    "sha256=ikd7ygmheBv5aDUWHdOC4sV3nwQqpGjEvgt1rHiqjQI",
    "sha256=kZFM298JuSBzDspNSN3raiDpI7AEMuz4yrgf_fJy0tE",
    "sha256=sWMD3PakQOOwkGZhPGnVQLk7Sl99ETdgjCkfUEnQ9mg",
    "sha256=tCQRT16SouKg3jPUVbszJE9ozrSKT4ORtG3uBOJIn2A",
    "sha256=tULPFNnh1PDWrmDNnTcK3V3REpMpD2qjB-kX5zbH-_k",
    # coverage 7.15.4 (6 listed above too)
    "sha256=82G79ZOwN8t7XmA-DaeV4Jje-tizJnCCZso19o5qsgA",
    "sha256=Wr3bSmEvCODw8LW5o_vqxJo5bsPL41w_WiJjk8NJ1uU",
    "sha256=ZKlcrtH8D6ND4tlyIm42hR6I_InGykR8EwYujfSOu1M",
    "sha256=xnO5ngyfu5hVn_RuDebHJs1dSMJzdR1xBeIyK04ywJE",
    # coverage 7.16.2
    "sha256=6rkPjjGh4vm7kTh-ypJ8TxtL9RfleE26ggBdSF-rM-Q",
    "sha256=DB8Lx5U33CkhhF45K6j0INlLwKGT6CABDmOJcgzdm0Y",
    "sha256=E2TKxeVErRXmU1cGznL4v_zhsDckBLLeC3nRgITRL9E",
    "sha256=EohbK67S6mlx_WgtkzHV2hIUHO_FDy3zko5fCTJhIvw",
    "sha256=PPFzzf7K6dzd_qlFKPR5sNbhO9Qng9-3Ap1skOh08uY",
    "sha256=QI251DY_NwE_UDgz0u3SAiXl7YZNj-SmtZMFpMJA62E",
    "sha256=agMP_vqkJkmzf5Z1tXRzXWq4v7AbK9OuyX4NhQnZq4Y",
    "sha256=egWnFz7AYViDFWZZpTlDqqoTpxjHeUSelcVchFMIC6U",
    "sha256=ibvqsnv500p9PvlGcQ5cqG1fE2aPbmoCgxV3p1ObpBg",
    "sha256=y1FxYVULql9nMqgHK-16iIS6wX4qasw2O0p1BDAbDjY",
    # coverage 7.17.5
    "sha256=0UEWGogBv7dhfFTKpU62oRP8_UVU9eBr9PH8djL_oYY",
    "sha256=3IhRmlaFcnkUFMhBZCI8lasUB1hCwlbnfoG6ScJbzeg",
    "sha256=6lCT6y1VDUZYKpxT-vT6l6cqljMwtnbXFhCIX5mMb4k",
    "sha256=CCnnmXN7rrZGgIHoFbwLbq9PIAKbOLn6veYAlKuO2MI",
    "sha256=KnPFDuFLBJKJ9ojSiJEVoKjBr2gEpud09SNzvJZTNfU",
    "sha256=PFmMOb47hvcXx7CQj1GKn-f_A-jR6Fj42qDmf4vcp_Y",
    "sha256=jcMGTnkwP2UA3-VDPh01-MfcWMNlVPXdVjWf13nuVg0",
    "sha256=miVWphbLgj5gwpOSy2CQvf7eCxCsQ00ekE1h1gRe2y0",
    # coverage 7.18.0
    "sha256=Alua8xzk0ucBc7HiLDC_y-PgVbaRQfiW0CAUqnMJQjM",
    "sha256=fvg62GVEVJDiG84dpdLQAHS3xsKxH5UypJdjA4gtnT8",
    "sha256=i4XNqtSogwDwVoKmtSEMqx071yc1LXl-6-_1Zb5Wa7s",
    "sha256=tC9jPRqe2Belnu87a7fRUhyMdLG-611v453Wefd9ll4",
    "sha256=tEN4yfIEabpn1Cqg13gFOuSd-_2u8cOF8S4FvORxlk8",
    "sha256=uN5GaLu3lKJ_5yLl_kgV9DaoCOG3v7qBMkL-C3rlyzg",
    "sha256=xNWPa33KnhP-RYXTz2K0ibFQATpwjXL-IzoiKvNdc-o",
    "sha256=zLGqGdXOtOhF2u8q-eg-Az9n98RA1h5Uz0URMeKLhFM",
))


#: ``editables``' package per release (hatchling's and pdm-backend's editable installs run
#: it: their bootstrap imports ``editables.redirector``, which runs ``editables/__init__.py``),
#: as :data:`COVERAGE`: sha256 over the sorted rows ``"editables/x.py sha256=<urlsafe b64,
#: unpadded>\n"`` of each ``.py`` file under ``editables/``.  Every release on PyPI (0.1 to
#: 0.6): ``pip download --no-deps editables==X``, then those rows from each wheel's files,
#: sorted, joined, hashed.
EDITABLES = {
    "4ccddf5840cf333d71180a7040b3964fcab224e223185fe158bf0b90f412b053":
        "editables 0.1",
    "ee6763a13b11bee9a813fe39dd81d521f5fcb41f89d5b4497a6382004c75afde":
        "editables 0.2",
    "00e2065ce5087af6dd1a0209cd1036ff0666ef33a3255769d39415aefa0fe84b":
        "editables 0.3",
    "8d27f7f47fcc54bc0f346b3920a8af62eeacf142b0c38363fd170fec9a3f984e":
        "editables 0.4",
    "4cc789bff21383f461881ce9c4a818fad8c7b5185d8eaad303c865e31256c839":
        "editables 0.5",
    "2f8d5231e7691c5ff5d3172198a43d7d77d217ce0bdc52bc1322511d45f77be5":
        "editables 0.6",
}


#: pytest-cov's subprocess support per release: sha256 over the sorted rows ``"path
#: sha256=<urlsafe b64, unpadded>\n"`` of ``pytest-cov.pth`` (its line, one of
#: :data:`.templates.PYTEST_COV_LINES`), ``pytest_cov/__init__.py`` and
#: ``pytest_cov/embed.py`` (what the line runs), the rows a RECORD pip writes holds for them:
#: the line and its modules, each byte for byte, of one release.  Every release shipping the
#: ``.pth``, 2.0.0 to 6.3.0 (7.0 ships none): ``pip download --no-deps --only-binary=:all:
#: pytest-cov==X``, then those three rows from each wheel's files, sorted, joined, hashed.
PYTEST_COV = {
    "a05f8c686727d12f127a0e548fac722c691afc1065827940cb4c48054ecc9849":
        "pytest-cov 2.0.0",
    "752cacad46a9b7e3dbf36110ffa7046dce7af33403ecb9ec99dd54f10d7b435a":
        "pytest-cov 2.1.0",
    "12f81c7e05e339a9aaf6497eea98be51e3ad9ca36755cd3fef9ef21e204ab9c9":
        "pytest-cov 2.2.0",
    "b271ae54add8496804d6525c6da27ee9e175380ec29d97c2330f7c9a93ffcbd4":
        "pytest-cov 2.2.1",
    "e63b57fc18feeebc065889c2238d72bc0ff538f4b233012eb94da9119e36e170":
        "pytest-cov 2.3.0",
    "a9c0b7774d51263728cceb7b7b4d0ccad0dce5f5fa66a2840850873f29d5f70b":
        "pytest-cov 2.3.1",
    "cb185606aae1144c5baa171de15157335e836dbc042b20c4f8f9f17ef8dcd9fa":
        "pytest-cov 2.4.0",
    "e8a4d28534be60afae810cadf7c635a48db8d91ead6e36d72b16e8f1cd51e5f6":
        "pytest-cov 2.5.0",
    "12c55f888f08c8fc9bf5b3c6527448b3cab5e73a6f979e84d4664bbb963bb048":
        "pytest-cov 2.5.1",
    "8493893fbf5b4fa8f2f6e08ab346e63cf5cfdef1138ee63e0e1cbf1b612a6318":
        "pytest-cov 2.6.0",
    "e4c9f93859dc1951ae7b5876b36764ed76448b451ab3b457f0f921c211ed8cf5":
        "pytest-cov 2.6.1",
    "7d8be4f5bb83eb8f1fe926b62d31f0cbded7842878311e442aacd2d8f3034afa":
        "pytest-cov 2.7.0",
    "f655c1d99e9da340bf0e9822fef8fa21d368e062ce99f2d1f79d15e2874d01c3":
        "pytest-cov 2.7.1",
    "1c9608eb9abd33343c794e10d69961ec48ed0e5a75965647b4d46571db42ae1a":
        "pytest-cov 2.8.0",
    "94102ecc310d74a522bff1d294888b93d97971678e24b1bcdcd00602125b74be":
        "pytest-cov 2.8.1",
    "fa7103ef2bca1981d7a167a75ee0ecd537a13dba9f0d17071edfba0ea7f0f46d":
        "pytest-cov 2.9.0",
    "3a032a150106c5f2c13aca1393d1851347f64698e1e8d21381cda44d3304afce":
        "pytest-cov 2.10.0",
    "aa4084f2cdcc60ae0ec78e3c627e35bdac46246701ea66cb9e9c1f449f1ea7d3":
        "pytest-cov 2.10.1",
    "806c1c47b6990b37f894fc735f4600cb73182206681e8a534cdfdcca17d8588c":
        "pytest-cov 2.11.0",
    "d3c767e7b2d7cb14b6500e0feb227578c115224f1047673c9d77abe6bcc56af0":
        "pytest-cov 2.11.1",
    "7a5d642cbf8e512c43d619919145d7891dc2bd12735c4d78960d0413c768516d":
        "pytest-cov 2.12.0",
    "3f5faa787d6cb5bd85b5c70fe55bd9b4a46bdaeb5aa401c5b93a955146c44d9c":
        "pytest-cov 2.12.1",
    "1791d120b68c9d6ac3decad02fd2f7798ccd2342398a0e99afc588a36a0f90fe":
        "pytest-cov 3.0.0",
    "d4e43cdecf0e59e5969f374776c087705f3682f37d1fe6365d8851dfb1d04eae":
        "pytest-cov 4.0.0",
    "b780b3972b2fb0e16d3ab409fb3ba169cda698697a4ab12e4e26bca1721591f5":
        "pytest-cov 4.1.0",
    "ff865dfce7b4069ac213b48333c5ba384ab7aeab1172d8003cef1b1dde9eef2e":
        "pytest-cov 5.0.0",
    "cf04c26b54ae1a3fa520c5aebea2026f6482b3f8ef7c73736e97bbedcfc88ac6":
        "pytest-cov 6.0.0",
    "e064cd59c5bb91bc3f0df80d7d3bb6eddfaf2ff36734fb0d5d55b96a55b2b291":
        "pytest-cov 6.1.0",
    "c3e16eb1db51d7f194f4a1e0a6db2d1df594a9dabadcd3bc6c886b06ce033b02":
        "pytest-cov 6.1.1",
    "0d565705d0c0fd6b9ebaa6d97a7dc47dee327cba6e3b7ed4e1668ae4548f5e19":
        "pytest-cov 6.2.0",
    "1456f9f6f4d38cc393ae4be302f9a4a44d2a4d575544e95a724bb1cb8f966f7e":
        "pytest-cov 6.2.1",
    "fbd6c91eae7670b143c271babf1bd2c927532785574d5866df7717c60a2c3cf6":
        "pytest-cov 6.3.0",
}


#: future-fstrings' codec per release: sha256 over the sorted rows ``"path
#: sha256=<urlsafe b64, unpadded>\n"`` of ``aaaaa_future_fstrings.pth`` (its line,
#: :data:`.templates.FUTURE_FSTRINGS_LINE`) and ``future_fstrings.py`` (the one top-level
#: module the line runs), the rows a RECORD pip writes holds for them: the line and its
#: module, each byte for byte, of one release.  Every release on PyPI, 0.1.0 to 1.2.0 (each
#: ships the ``.pth``, with the same line): ``pip download --no-deps --only-binary=:all:
#: future-fstrings==X``, then those two rows from each wheel's files (each checked against
#: its RECORD), sorted, joined, hashed; a wheel built from each sdist (its ``setup.py``
#: writes the same line) gives the same rows.  Debian ships no future-fstrings (12, 13, sid).
FUTURE_FSTRINGS = {
    "48ff86b46e0dd8459a6bd1950d058192e5494623dc7a62cf0048cb5575f2c900":
        "future-fstrings 0.1.0 .. 0.1.1",
    "1821d4d1cf4f3f66c30a019af05f362f970c444f31cdc3830ae6be527552e6f3":
        "future-fstrings 0.2.0",
    "2761c86b3116acc4b951a721ec7c5e055826657d5b1125106db826e69a58f16b":
        "future-fstrings 0.2.1",
    "6f39a7ea40274a69175c6a4d8d7b73217f0ad0a3b3daefe943e5b1ca2863c3f2":
        "future-fstrings 0.3.0",
    "328b5f81d264e35c5946644609912b3bac27fbdde9814f997fb1001a829721da":
        "future-fstrings 0.4.0",
    "d6fdffa00955f891e96cb98e16513dd18487c7bbf5f0bc4c28fbe1c605d4a806":
        "future-fstrings 0.4.1",
    "a5c31f6b8d5daf7b1033fd3af4f67de61d06ed969292465282078fff7100e73c":
        "future-fstrings 0.4.2",
    "62056b9610e0fe707492fd481910b81ddc5b2582d9367caec3143b6d3db27002":
        "future-fstrings 0.4.3",
    "2516bdfb1f322a8254b917d2b85496623c51350eaa39c4048c64afc7e7f4b487":
        "future-fstrings 0.4.4",
    "a0dfc1a10443fccea7af9243ba28ca0ee4db0241e08f27897a65bff8258b386a":
        "future-fstrings 0.4.5 .. 1.0.0",
    "4b47676b2ea282cfc8824fb6d45e54a0de1fc53450005ae92e66611caa8cd375":
        "future-fstrings 1.1.0",
    "c50761727b7083d543c36a5d297eaae1f35ee34057eb78842165b577f72a9100":
        "future-fstrings 1.2.0",
}


#: scikit-build-core's and meson-python's editable loaders, data masked
#: (:func:`.templates.masked_form` with :data:`.templates.LOADER_CALLS`): the releases
#: generating each form (``.start``: the ``entrypoint()`` form for a ``.start`` file).
#: Collected from the backends' wheels on PyPI (the last release of each minor version:
#: scikit-build-core 0.6 to 1.1, meson-python 0.13 to 0.22): each one's loader source
#: (``resources/_editable_redirect.py``, ``mesonpy/_editable.py``) with the call its
#: generator appends, rendered with sample data, formed.
EDITABLE_LOADER = {
    "d18a295321b227a2cf605095281a5acd965b7b0acef79438d5da1cd232904781":
        "scikit-build-core 0.6.1",
    "45e02bd80331163234eeaee71e919e6420ed6d5067611fd95fd53d5a194f973b":
        "scikit-build-core 0.7.1 .. 0.9.10",
    "4124ac2a795caa4173df1ac8ea6df8c7fadd3e394bdc6157b666d0681450f45f":
        "scikit-build-core 0.10.7",
    "9660d61f9619a342be8bf2a6ecb822d4369ef73966a957fdf79b27aa6844e5b7":
        "scikit-build-core 0.11.6 .. 0.12.2",
    "f6c0ac6631e34e1762c6809df81f1ee02baf95afd79c3e3c1b38f1f0272facb8":
        "scikit-build-core 1.0.3",
    "514f27d7a87c00e5eb92c81d2de80c04f90b0d84bdadf9f1cddeb0f48d3c8f19":
        "scikit-build-core 1.0.3 (.start)",
    "f10e853954a29e157adb87c6fc37fdd75d285876d05175b27f12741a25ecfeaa":
        "scikit-build-core 1.1.0 .. 1.1.1",
    "59f4d3fec20251f48c7daac2b5ddbec03bcfc19605adaad9c6906f3304cd3994":
        "scikit-build-core 1.1.0 (.start) .. 1.1.1 (.start)",
    "de59b482c0244ef233f0f72fbddbb5826a4e52f35b0ddc0df1f7d43173341ad9":
        "scikit-build-core 1.1.2",
    "6048a0008e4fc8671cfa148f1e06e7c96460fa566009e3fbaa55f1a26b77879e":
        "scikit-build-core 1.1.2 (.start)",
    "04a37495d8cf4d27ddac5e23ebd03538d2bd788d69db31674c572043d6918072":
        "meson-python 0.13.2",
    "2ede73ed1f6b082f46ce0cbefba6222cfa63c5c7a945b88d5c01123437a9d22c":
        "meson-python 0.14.0 .. 0.15.0",
    "2652a962552d16eafe81b7fed10addef6fdabb601622b959fbf1dd33efe7fe85":
        "meson-python 0.16.0",
    "eb3eab508be60d5ff7bba88a529351452d848575fdf027cd2ce8f44e159f3af7":
        "meson-python 0.17.1 .. 0.18.0",
    "2f3f4bb2024cadd6db1f2aebaa4d7ca64a95cf6442224437e56ecc818d172e2c":
        "meson-python 0.19.0 .. 0.20.0",
    "fc80d31572007d6e776d9a5580a4567ef483e7366c45d1de7682d30573719a42":
        "meson-python 0.21.1",
    "39ce51f63f60c0e6f79fe7f1fdfc371ef3dc5f0413195bb96080f7e062994137":
        "meson-python 0.22.0 .. 0.22.1",
}
